package ctxwin

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// session builds a manager with a small fixed prefix.
func session(window int) *Manager {
	m := NewManager(NewHistory("system prompt", simTools), window)
	m.Setup().Outliner(func(r *Result, budget int) string {
		return fmt.Sprintf("L1-20 func Outline%s()", strings.TrimSuffix(strings.TrimPrefix(r.Path, "src/"), ".go"))
	})
	return m
}

// lines returns n numbered lines.
func lines(n int, tag string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s line %d of the file with some code in it\n", tag, i)
	}
	return b.String()
}

func readResult(id, path string, n int) *Result {
	text := lines(n, path)
	return &Result{CallID: id, Tool: "read", Kind: KindRead, Text: text, Path: path,
		StartLine: 1, EndLine: n, TotalLines: n, Summary: fmt.Sprintf("Read %s lines 1-%d of %d", path, n, n)}
}

func call(id string) ToolCall { return ToolCall{ID: id, Name: "read", Arguments: `{"path":"x"}`} }

// send renders, marks sent and reports usage at the baseline density.
func send(m *Manager) []Message {
	msgs := m.H.Messages()
	m.Sent()
	chars := ToolChars(m.H.Tools)
	for _, x := range msgs {
		chars += x.Chars()
	}
	m.Observe(chars/4, 200)
	return msgs
}

func TestCutPriorities(t *testing.T) {
	m := session(16000)
	m.StartTurn("fix it")
	send(m)
	it := m.H.AddRound(Message{ToolCalls: []ToolCall{call("t"), call("r1"), call("r2"), call("s"), call("b1"), call("b2")}})
	_ = it
	task := &Result{CallID: "t", Tool: "read", Kind: KindRead, Text: lines(150, "task"), Task: true, Path: "issue.md"}
	old := readResult("r1", "src/a.go", 400)
	newest := readResult("r2", "src/b.go", 150)
	small := &Result{CallID: "s", Tool: "grep", Kind: KindGrep, Text: "a.go:1:match\n"}
	big1 := &Result{CallID: "b1", Tool: "bash", Kind: KindBash, Text: lines(2000, "bash1"), SavedTo: "/tmp/reika/bash-1.txt"}
	big2 := &Result{CallID: "b2", Tool: "bash", Kind: KindBash, Text: lines(300, "bash2"), SavedTo: "/tmp/reika/bash-2.txt"}
	for _, r := range []*Result{task, old, newest, small, big1, big2} {
		m.H.AddResult(r)
	}
	m.Prepare()
	if task.Cut || newest.Cut || small.Cut {
		t.Errorf("cut a result with priority: task %v, newest read %v, small %v", task.Cut, newest.Cut, small.Cut)
	}
	if !old.Cut || !big1.Cut {
		t.Errorf("the rest was not cut: old read %v, big bash %v", old.Cut, big1.Cut)
	}
	if !strings.Contains(big1.View, "hit the context limit") || !strings.Contains(big1.View, "/tmp/reika/bash-1.txt") {
		t.Errorf("cut marker does not name the limit and the temp file:\n%s", big1.View[len(big1.View)/2-300:len(big1.View)/2+300])
	}
	if !strings.HasPrefix(big1.View, "bash1 line 1 ") || !strings.HasSuffix(big1.View, "bash1 line 2000 of the file with some code in it\n") {
		t.Error("a cut does not keep the start and the end")
	}
	if !strings.Contains(old.View, "Read src/a.go with start_line and end_line") {
		t.Error("a cut read does not say how to read the rest")
	}
	b, _ := m.Gauge().Budget()
	if size := m.Gauge().Size(); size > b.Usable {
		t.Errorf("request of %d tokens after the cut, usable %d", size, b.Usable)
	}
	if big1.Text != lines(2000, "bash1") {
		t.Error("the cut changed the result's whole text")
	}
}

func TestCutRestoresWithRoom(t *testing.T) {
	m := session(16000)
	m.StartTurn("task")
	m.H.AddRound(Message{ToolCalls: []ToolCall{call("a")}})
	r := readResult("a", "src/a.go", 3000)
	m.H.AddResult(r)
	m.Prepare()
	if !r.Cut {
		t.Fatal("a 3000-line read in a 16k window was not cut")
	}
	m.Setup().Window(10_000_000)
	m.Prepare()
	if r.Cut || r.Shown() != r.Text {
		t.Error("more room did not restore the result whole")
	}
}

// fill runs rounds of one read each until a shrink is due, and returns the
// plan that says so.
func fill(t *testing.T, m *Manager, readLines int) Plan {
	t.Helper()
	for i := 0; i < 500; i++ {
		p := m.Prepare()
		if p.Shrink {
			return p
		}
		send(m)
		id := fmt.Sprintf("c%d", i)
		m.H.AddRound(Message{Content: fmt.Sprintf("reading %d", i), Reasoning: lines(5, "think"), ToolCalls: []ToolCall{call(id)}})
		m.H.AddResult(readResult(id, fmt.Sprintf("src/f%d.go", i), readLines))
	}
	t.Fatal("never reached the shed point")
	return Plan{}
}

func TestShedOldestFirstLargeBeforeSmall(t *testing.T) {
	m := session(24000)
	m.StartTurn("the task")
	send(m)
	// Round 1: a small result; rounds 2..: large reads.
	m.H.AddRound(Message{ToolCalls: []ToolCall{call("s0")}, Reasoning: "small thoughts"})
	m.H.AddResult(&Result{CallID: "s0", Tool: "grep", Kind: KindGrep, Text: lines(12, "grep"), Summary: `grep "x": 12 matches`})
	p := fill(t, m, 120)
	if p.Fold {
		t.Fatalf("the first shrink folds; want a shed: %+v", p)
	}
	before := m.H.Messages()
	ev := m.Shrink(p, "")
	if ev == nil || ev.Fold != nil || len(ev.Shed) == 0 {
		t.Fatalf("want a shed-only event, got %+v", ev)
	}
	b, _ := m.Gauge().Budget()
	if m.Gauge().Size() > b.ShedTarget {
		t.Errorf("shed stopped at %d tokens, target %d", m.Gauge().Size(), b.ShedTarget)
	}
	// Large payloads first: the small grep survives while large reads are shed.
	small := m.H.Items[1].Results[0]
	if small.Shed {
		t.Error("a small result was shed before the large ones")
	}
	// Oldest first: shed results form a prefix of the large reads.
	seenKept := false
	for _, it := range m.H.Items[2 : len(m.H.Items)-1] {
		r := it.Results[0]
		if r.Shed && seenKept {
			t.Fatalf("round %d shed after a newer round was kept", it.Round)
		}
		if !r.Shed {
			seenKept = true
		}
		// A round whose results are all shed leaves the view whole, its
		// reasoning with it.
		if r.Shed != it.Dropped || it.Dropped && m.H.InView(slices.Index(m.H.Items, it)) {
			t.Errorf("round %d: result shed %v but round dropped %v", it.Round, r.Shed, it.Dropped)
		}
		if r.Shed {
			// In place, the first line of the result; in the event's
			// message, its round, that line and its outline.
			line := strings.SplitN(r.Text, "\n", 2)[0]
			if r.View != line+"\n" {
				t.Errorf("shed read shows %q, want its first line %q", r.View, line)
			}
			want := fmt.Sprintf("- round %d: `%s`", it.Round, line)
			if msg := ev.Message; !strings.Contains(msg, want+" (Read ") || !strings.Contains(msg, "L1-20 func Outline") {
				t.Errorf("the event's message does not name round %d's read with its outline:\n%s", it.Round, msg)
			}
		}
	}
	if last := m.H.Last(); last.Results[0].Shed || last.ReasoningShed {
		t.Error("the current round was shed")
	}
	if a := m.H.Last().After; a == nil || !hasContextMark(a.Message) || !strings.HasSuffix(a.Message, ShedNotice) {
		t.Errorf("no message to the model after the newest round: %+v", a)
	}
	after := m.H.Messages()
	d := Diverge(before, after)
	if d.Append {
		t.Fatal("the shed did not change the request")
	}
	// One rewrite point: everything before the first shed round is
	// unchanged, and the request goes on at the first round kept.
	first := -1
	for i, msg := range before {
		if msg.Role == RoleAssistant && len(msg.ToolCalls) > 0 && msg.ToolCalls[0].ID == m.H.Items[2].Assistant.ToolCalls[0].ID {
			first = i
		}
	}
	if d.Index != first {
		t.Errorf("the request diverges at message %d (%s), want %d, where round 2 was", d.Index, m.Gauge().Describe(d.Index), first)
	}
}

func TestTaskPayloadIsNeverShed(t *testing.T) {
	m := session(16000)
	m.StartTurn("do what issue.md says")
	send(m)
	m.H.AddRound(Message{ToolCalls: []ToolCall{call("task")}})
	m.H.AddResult(&Result{CallID: "task", Tool: "read", Kind: KindRead, Text: lines(100, "issue"), Path: "issue.md", Task: true, Summary: "Read issue.md lines 1-100 of 100"})
	m.Shrink(fill(t, m, 80), "")
	if r := m.H.Items[1].Results[0]; r.Shed {
		t.Fatal("the task-defining payload was shed")
	}
}

func TestFoldNoteRecapAndAppend(t *testing.T) {
	m := session(16000)
	m.StartTurn("TASK: refactor the parser")
	send(m)
	m.H.AddRound(Message{ToolCalls: []ToolCall{{ID: "g", Name: "grep", Arguments: `{"pattern":"parse"}`}, {ID: "f", Name: "fetch_url", Arguments: `{}`}}})
	m.H.AddResult(&Result{CallID: "g", Tool: "grep", Kind: KindGrep, Text: lines(30, "grep"), Query: "parse", Summary: `grep "parse": 30 matches in 4 files`})
	m.H.AddResult(&Result{CallID: "f", Tool: "fetch_url", Kind: KindFetch, Text: lines(30, "page"), URL: "https://example.com/spec", Summary: "Fetched https://example.com/spec (2 KB)"})
	var p Plan
	for {
		p = fill(t, m, 60)
		if p.Fold {
			break
		}
		m.Shrink(p, "")
	}
	if !p.Note {
		t.Fatal("a fold is due but the note round is skipped")
	}
	prev := m.H.Messages()
	nr := m.NoteRound().Messages
	if !Diverge(prev, nr).Append || len(nr) != len(prev)+1 {
		t.Fatal("the note request is not the current request plus the note prompt")
	}
	ev := m.Shrink(p, "NOTE: the parser lives in src/f3.go")
	if ev == nil || ev.Fold == nil {
		t.Fatalf("no fold: %+v", ev)
	}
	rc := m.H.Recap.Text
	for _, want := range []string{"Your note above", "The request of turn 1 above is the task", "src/f5.go: read lines 1-60",
		"https://example.com/spec", `grep "parse": 30 matches in 4 files`, "What happened (newest first)"} {
		if !strings.Contains(rc, want) {
			t.Errorf("recap lacks %q:\n%s", want, rc)
		}
	}
	// The task stays where it was; the note round's prompt and note stay
	// as they were sent, and the fold's message follows them.
	after := m.H.Messages()
	if after[1].Content != "TASK: refactor the parser" || strings.Contains(rc, "TASK:") {
		t.Errorf("the task is not where it was, or the recap repeats it: %q", after[1].Content)
	}
	n := len(after)
	if after[n-3].Content != NotePrompt || after[n-2].Content != "NOTE: the parser lives in src/f3.go" || !strings.Contains(after[n-1].Content, rc) {
		t.Errorf("the request does not end with the note round and the fold's message: %q", after[n-3:])
	}
	b, _ := m.Gauge().Budget()
	if tok := m.est.Tokens(len(rc), false); tok > b.Recap+b.Recap/10 {
		t.Errorf("recap of %d tokens, budget %d", tok, b.Recap)
	}
	if m.Gauge().Size() > b.ShedTarget {
		t.Errorf("%d tokens after the fold, target %d", m.Gauge().Size(), b.ShedTarget)
	}
	// Events newest first, without the reads, searches and pages the
	// other lists name.
	events := rc[strings.Index(rc, "What happened"):]
	for _, listed := range []string{"Read src/", `grep "parse"`, "https://example.com/spec"} {
		if strings.Contains(events, listed) {
			t.Errorf("what happened repeats %q, which another list of the recap has:\n%s", listed, rc)
		}
	}
	rounds := regexp.MustCompile(`(?m)^- r(\d+) `).FindAllStringSubmatch(events, -1)
	if len(rounds) < 4 {
		t.Fatalf("few events in the recap:\n%s", rc)
	}
	prevRound := 1 << 30
	for _, r := range rounds {
		n, _ := strconv.Atoi(r[1])
		if n > prevRound {
			t.Fatalf("events are not newest first:\n%s", events)
		}
		prevRound = n
	}
	if first, _ := strconv.Atoi(rounds[0][1]); first != ev.Fold.Recap.LastRound {
		t.Errorf("the newest event is round %d, the fold's last round %d", first, ev.Fold.Recap.LastRound)
	}
	// Then requests append again.
	msgs := send(m)
	m.H.AddRound(Message{Content: "more", ToolCalls: []ToolCall{call("z")}})
	m.H.AddResult(readResult("z", "src/z.go", 5))
	if m.Prepare().Shrink {
		t.Fatal("shrink right after a fold")
	}
	if !Diverge(msgs, m.H.Messages()).Append {
		t.Error("the request after a fold is not an append")
	}
	// A second fold absorbs the first recap.
	for {
		p = fill(t, m, 60)
		if ev := m.Shrink(p, "SECOND NOTE"); ev != nil && ev.Fold != nil {
			break
		}
	}
	rc2 := m.H.Recap.Text
	if !strings.Contains(rc2, "## Earlier notes (newest first)\n- \"NOTE: the parser lives in src/f3.go\"") || strings.Contains(rc2, "TASK:") {
		t.Errorf("the second recap does not absorb the first:\n%s", rc2)
	}
	recaps, notes := 0, 0
	for _, x := range m.H.Messages() {
		recaps += strings.Count(x.Content, "<recap>")
		if x.Content == NotePrompt {
			notes++
		}
	}
	if recaps != 1 || notes != 1 {
		t.Errorf("%d recaps and %d note rounds in the request", recaps, notes)
	}
}

func TestCompact(t *testing.T) {
	m := session(32000)
	if ok, why := m.CanCompact(); ok || why != "Nothing to fold" {
		t.Errorf("empty session: %v %q", ok, why)
	}
	m.StartTurn("task one")
	send(m)
	m.H.AddRound(Message{Content: "done"})
	if ok, _ := m.CanCompact(); ok {
		t.Error("a session that fits the fold keeps offers a fold")
	}
	for i := 0; i < 12; i++ {
		m.StartTurn(fmt.Sprintf("task %d", i))
		m.H.AddRound(Message{ToolCalls: []ToolCall{call(fmt.Sprintf("x%d", i))}})
		m.H.AddResult(readResult(fmt.Sprintf("x%d", i), "src/a.go", 60))
		m.H.AddRound(Message{Content: "done"})
	}
	ok, _ := m.CanCompact()
	if !ok {
		t.Fatal("nothing to fold in a long session")
	}
	ev := m.Compact("compact note")
	if ev == nil || ev.Fold == nil || ev.Reason != ReasonCompact {
		t.Fatalf("compact: %+v", ev)
	}
	if ev.Note != "compact note" || !strings.Contains(m.H.Recap.Text, "Your note above") {
		t.Errorf("the note does not lead the recap: %q", ev.Note)
	}
	if ev.After >= ev.Before {
		t.Errorf("compact did not shrink: %d → %d", ev.Before, ev.After)
	}
}

func TestThrashGuard(t *testing.T) {
	m := session(8000)
	m.StartTurn("task")
	send(m)
	folds := 0
	for i := 0; i < 400 && !thrashing(m); i++ {
		p := m.Prepare()
		if p.Shrink {
			if ev := m.Shrink(p, ""); ev != nil && ev.Fold != nil {
				folds++
			}
		}
		send(m)
		id := fmt.Sprintf("c%d", i)
		// Every round the model writes more than the shed cycle can hold:
		// replies cannot be shed, only folded.
		m.H.AddRound(Message{Content: lines(120, "essay"), ToolCalls: []ToolCall{call(id)}})
		m.H.AddResult(&Result{CallID: id, Tool: "grep", Kind: KindGrep, Text: "no matches"})
	}
	if !thrashing(m) {
		t.Fatalf("a session that refills right after every fold was not stopped (%d folds)", folds)
	}
	if folds > ThrashLimit+1 {
		t.Errorf("stopped after %d folds, want %d", folds, ThrashLimit+1)
	}
	m.StartTurn("another task")
	if thrashing(m) {
		t.Error("a new turn did not clear the guard")
	}
}

func TestOverflowShrinks(t *testing.T) {
	m := session(16000)
	m.StartTurn("task")
	for i := 0; i < 6; i++ {
		send(m)
		id := fmt.Sprintf("c%d", i)
		m.H.AddRound(Message{ToolCalls: []ToolCall{call(id)}})
		m.H.AddResult(readResult(id, "src/a.go", 40))
	}
	if m.Prepare().Shrink {
		t.Fatal("setup: already at the shed point")
	}
	// The engine refuses the request: the prompt is far bigger than
	// estimated.
	m.Sent()
	m.Observe(16500, 0)
	ev := m.ShrinkToFit()
	if ev == nil {
		t.Fatal("an overflow shrank nothing")
	}
	if m.est.LearnedRatio() <= 1 {
		t.Errorf("the overflow did not teach a denser ratio: %v", m.est.LearnedRatio())
	}
}

func TestPersistAndReplay(t *testing.T) {
	m := session(16000)
	m.StartTurn("persisted task")
	var events []*Event
	log := func() []byte {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for i := 0; i < 60; i++ {
		p := m.Prepare()
		if p.Shrink {
			if ev := m.Shrink(p, "note"); ev != nil {
				events = append(events, ev)
			}
		}
		send(m)
		id := fmt.Sprintf("c%d", i)
		m.H.AddRound(Message{ToolCalls: []ToolCall{call(id)}, Reasoning: "r"})
		m.H.AddResult(readResult(id, fmt.Sprintf("src/f%d.go", i), 50))
	}
	if len(events) == 0 {
		t.Fatal("no event to persist")
	}
	var back Manager
	if err := json.Unmarshal(log(), &back); err != nil {
		t.Fatal(err)
	}
	back.Restored()
	if !sameMessages(back.H.Messages(), m.H.Messages()) {
		t.Fatal("a restored manager renders a different request")
	}
	if back.Gauge().Size() > m.Gauge().Size()+m.Gauge().Size()/20 {
		t.Errorf("restored size %d, live %d: restored messages should count as carried", back.Gauge().Size(), m.Gauge().Size())
	}
	// Events replay onto the same items.
	ev := events[len(events)-1]
	raw, _ := json.Marshal(ev)
	var ev2 Event
	if err := json.Unmarshal(raw, &ev2); err != nil {
		t.Fatal(err)
	}
	if ev2.Fold == nil && ev.Fold != nil || len(ev2.Shed) != len(ev.Shed) {
		t.Error("an event does not survive JSON")
	}
}

func TestDiverge(t *testing.T) {
	a := []Message{{Role: "system", Content: "s"}, {Role: "user", Content: "u"}}
	b := append(append([]Message(nil), a...), Message{Role: "assistant", Content: "x"})
	if d := Diverge(a, b); !d.Append || d.Index != 2 {
		t.Errorf("append: %+v", d)
	}
	c := []Message{{Role: "system", Content: "s"}, {Role: "user", Content: "changed"}}
	if d := Diverge(a, c); d.Append || d.Index != 1 {
		t.Errorf("rewrite: %+v", d)
	}
	if d := Diverge(b, a); d.Append || d.Index != 2 {
		t.Errorf("shorter: %+v", d)
	}
}

// TestFirstMaxTokensLeavesRoomToAnswer: before any report the estimate may
// price the fixed prefix above a small window; max_tokens still leaves the
// reserve for the reply (measured on llama-server: a prefix the engine
// counted at 1,996 tokens priced at 4,131, max_tokens 1 on -c 4096).
func TestFirstMaxTokensLeavesRoomToAnswer(t *testing.T) {
	system := strings.Repeat("func f() { return x[i] + y }\n", 230) // ~6.6k bytes: ~4.1k tokens at 1.6 chars a token
	for _, tc := range []struct {
		window, setting, want int
	}{
		{4096, 0, 1024}, // the reserve: a quarter of the window
		{2048, 0, 512},
		{16384, 0, 2048},
		{4096, 300, 300}, // REIKA_MAX_TOKENS still caps it
	} {
		m := NewManager(NewHistory(system, nil), tc.window)
		m.Setup().Configure(Settings{MaxTokens: tc.setting, ReasoningRounds: 2})
		m.StartTurn("go")
		if est := m.Gauge().Size(); tc.window == 4096 && est < tc.window {
			t.Fatalf("the prefix is estimated at %d tokens, want over the window to test the floor", est)
		}
		if got := m.Gauge().MaxTokens(); got < tc.want || tc.setting > 0 && got != tc.setting {
			t.Errorf("window %d: max_tokens %d before any report, want at least %d", tc.window, got, tc.want)
		}
		// Once the engine has counted a prompt, the estimate is trusted: a
		// request that leaves less than the floor is not to be sent, and
		// max_tokens never goes below the floor (but under the setting).
		m.Sent()
		m.Observe(tc.window-200, 10)
		b, _ := m.Gauge().Budget()
		floor := AnswerFloor(tc.window, b.Reserve)
		if got, want := m.Gauge().MaxTokens(), MaxTokens(tc.window, tc.window-ReplyMargin-floor, 0, tc.setting); got != want {
			t.Errorf("window %d: max_tokens %d after a report, want %d, the floor", tc.window, got, want)
		}
		if room, fl, measured, ok := m.Gauge().AnswerRoom(); !ok || !measured || room >= fl || fl != floor {
			t.Errorf("window %d: answer room %d, floor %d (measured %v): want below the floor %d, measured", tc.window, room, fl, measured, floor)
		}
	}
}
