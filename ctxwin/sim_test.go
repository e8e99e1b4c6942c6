package ctxwin

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// sim drives a Manager the way the agent does, with a random model and
// random tool results, and checks the invariants of docs/design.md §3 on every
// request.
type sim struct {
	t      *testing.T
	rng    *rand.Rand
	m      *Manager
	cpt    float64 // the fake engine's chars per token
	prev   []Message
	reqs   int
	events int
	diverg int
	notes  int
	folds  int
	sheds  int
	turn   int
	task   string
}

var simTools = []ToolSpec{
	{Name: "read", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
	{Name: "bash", Description: "Run a command.", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
	{Name: "grep", Description: "Search.", Parameters: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string"}}}`)},
}

func newSim(t *testing.T, seed int64, window int) *sim {
	rng := rand.New(rand.NewSource(seed))
	h := NewHistory("You are a coding agent.\n"+strings.Repeat("repo map line\n", 50), simTools)
	m := NewManager(h, window)
	m.Setup().Outliner(func(r *Result, budget int) string {
		var b strings.Builder
		for i := 1; b.Len() < budget-40 && i < 30; i++ {
			fmt.Fprintf(&b, "L%d-%d func F%d()\n", i*10, i*10+8, i)
		}
		return b.String()
	})
	if seed%2 == 1 {
		m.Setup().ChunkReuse(8) // folds keep events' openings
	}
	return &sim{t: t, rng: rng, m: m, cpt: 2.5 + rng.Float64()*2.5}
}

func (s *sim) text(n int) string {
	var b strings.Builder
	for b.Len() < n {
		fmt.Fprintf(&b, "line %d: %x\n", b.Len(), s.rng.Int63())
	}
	return b.String()[:n]
}

// startTurn opens a turn with a task prompt.
func (s *sim) startTurn() {
	s.turn++
	s.task = fmt.Sprintf("TASK-%d: %s", s.turn, s.text(200+s.rng.Intn(400)))
	s.m.StartTurn(s.task)
}

// request prepares, shrinks when due and renders the next request, then
// checks it.
func (s *sim) request() []Message {
	t := s.t
	p := s.m.Prepare()
	ev := p.Applied
	if ev != nil {
		s.events++
	}
	if p.Shrink {
		note := ""
		if p.Fold && p.Note {
			nr := s.m.NoteRound().Messages
			if d := Diverge(s.prev, nr); !d.Append {
				t.Fatalf("request %d: the note request is not an append of the previous request (diverges at %d)", s.reqs, d.Index)
			}
			if nr[len(nr)-1].Content != NotePrompt {
				t.Fatalf("note request does not end with the note prompt")
			}
			s.notes++
			note = fmt.Sprintf("NOTE-%d: established facts", s.notes)
			s.m.Sent() // as the agent does: the note request carried it all
		}
		before := s.m.H.Messages()
		ev = s.m.Shrink(p, note)
		if ev != nil {
			s.events++
			if err := cacheShaped(recutBefore(before, s.m.H.Messages()), s.m.H.Messages()); err != nil {
				t.Fatalf("request %d: the shrink is not deletions and one message appended: %v", s.reqs, err)
			}
			// Unless keeping the reply whole would not fit, or would add
			// more than a fold keeps a reply whole for.
			if i, r := reasoningAfterDeletion(before, s.m.H.Messages()); i >= 0 {
				b, _ := s.m.Gauge().Budget()
				if gain := s.m.Prices().Tokens(len(r), true); s.m.Gauge().Size()+gain <= b.Usable && gain <= openingReplyKeep {
					t.Errorf("request %d: the shrink deleted the reasoning of message %d right after another deletion (size %d, usable %d)", s.reqs, i, s.m.Gauge().Size(), b.Usable)
				}
			}
			if ev.Fold != nil {
				s.folds++
				if err := openingsFollowed(before, s.m.H.Messages()); err != nil {
					t.Fatalf("request %d: %v", s.reqs, err)
				}
				if note != "" && ev.Note != note {
					t.Fatalf("the note does not stay before the recap: %q", ev.Note)
				}
				if strings.Contains(ev.Message, s.task) {
					t.Fatalf("the recap repeats the task, which stays in place:\n%s", ev.Message)
				}
			} else {
				s.sheds++
			}
		}
	}
	msgs := s.m.H.Messages()
	s.check(msgs, ev)
	s.prev = msgs
	s.reqs++
	// Send: the fake engine counts tokens at its own density.
	chars := 0
	for _, m := range msgs {
		chars += m.Chars()
	}
	chars += ToolChars(simTools)
	s.m.Sent()
	s.m.Observe(int(float64(chars)/s.cpt)+1, 100+s.rng.Intn(3000))
	return msgs
}

func (s *sim) check(msgs []Message, ev *Event) {
	t := s.t
	b, known := s.m.Gauge().Budget()
	if s.prev != nil {
		d := Diverge(s.prev, msgs)
		if !d.Append {
			s.diverg++
			if ev == nil {
				t.Fatalf("request %d rewrote message %d (%s) without a shrink event", s.reqs, d.Index, s.m.Gauge().Describe(d.Index))
			}
		} else if ev != nil && known {
			t.Fatalf("request %d: a shrink event left the request an append", s.reqs)
		}
	}
	// The fresh rendering equals the cached one.
	fresh := &History{System: s.m.H.System, Tools: s.m.H.Tools, Items: s.m.H.Items, Folded: s.m.H.Folded, Recap: s.m.H.Recap, RecapFirst: s.m.H.RecapFirst}
	if got := fresh.Messages(); !sameMessages(got, msgs) {
		t.Fatalf("request %d: cached rendering differs from a fresh one", s.reqs)
	}
	// The task is in every request.
	found := false
	for _, m := range msgs {
		if strings.Contains(m.Content, s.task) {
			found = true
			break
		}
	}
	if !found {
		t.Fatalf("request %d: the task definition is missing", s.reqs)
	}
	// Recaps never stack.
	recaps := 0
	for _, m := range msgs {
		recaps += strings.Count(m.Content, "<recap>")
	}
	if recaps > 1 {
		t.Fatalf("request %d: %d recaps", s.reqs, recaps)
	}
	// A tool call is never separated from its result.
	pending := map[string]bool{}
	for i, m := range msgs {
		switch m.Role {
		case RoleAssistant:
			if len(pending) > 0 {
				t.Fatalf("request %d: message %d: calls without results: %v", s.reqs, i, pending)
			}
			for _, c := range m.ToolCalls {
				pending[c.ID] = true
			}
		case RoleTool:
			if !pending[m.ToolCallID] {
				t.Fatalf("request %d: message %d: a result without its call %s", s.reqs, i, m.ToolCallID)
			}
			delete(pending, m.ToolCallID)
		}
	}
	// The current round is never shed.
	if last := s.m.H.Last(); last != nil {
		for _, r := range last.Results {
			if r.Shed {
				t.Fatalf("request %d: the current round was shed", s.reqs)
			}
		}
		if len(s.m.H.Items)-1 < s.m.H.Folded {
			t.Fatalf("request %d: the current item was folded", s.reqs)
		}
	}
	if known && ev != nil {
		// After a shrink the request fits the usable window, unless what
		// no shrink may touch (the fixed prefix, the current round, a task
		// prompt that folding would only grow) does not: then nothing more
		// can be shed or folded.
		if size := s.m.Gauge().Size(); size > b.Usable {
			if more := s.m.plan(b, ReasonOverflow, ""); more != nil {
				costs, fixed := s.m.costs()
				t.Fatalf("request %d: %d tokens after a shrink (%d sheds, fold %v), usable %d (fixed %d, current round %d), and more could go: %d sheds, fold %v",
					s.reqs, size, len(ev.Shed), ev.Fold != nil, b.Usable, fixed, costs[len(costs)-1], len(more.ev.Shed), more.ev.Fold != nil)
			}
		}
	}
}

// cacheShaped checks that after is before with spans deleted, then what a
// shrink appends: the note round's prompt and note, and the event's
// message. A message of after is a deletion of one of before when it has
// its role and ids and keeps a prefix of its content (a shed result, or an
// event's message a fold kept the first line of), its reasoning or none,
// and each call's arguments with a span cut out.
// recutBefore is the request before a shrink with the newest round's
// results as the shrink cut them again (Event.Recut): the round was not
// sent (but in the note round), and taking the room the event made is the
// event's own change to it, not a deletion.
func recutBefore(before, after []Message) []Message {
	start, end := NewestItem(before)
	now := map[string]Message{}
	for _, m := range after {
		if m.Role == RoleTool {
			now[m.ToolCallID] = m
		}
	}
	out := append([]Message(nil), before...)
	for i := start; i < end; i++ {
		if m, ok := now[out[i].ToolCallID]; ok && out[i].Role == RoleTool {
			out[i] = m
		}
	}
	return out
}

func cacheShaped(before, after []Message) error {
	end := len(after)
	if end == 0 || !IsAside(after[end-1]) || after[end-1].Content == NotePrompt {
		return fmt.Errorf("the request does not end with the event's message")
	}
	end--
	if end >= 2 && after[end-2].Content == NotePrompt {
		end -= 2
	}
	j := 0
	for i, m := range after[:end] {
		for j < len(before) && !isDeletion(before[j], m) {
			j++
		}
		if j == len(before) {
			return fmt.Errorf("message %d (%s, %.60q) is not a deletion of a message of the request before, in order", i, m.Role, m.Content)
		}
		j++
	}
	return nil
}

// reasoningAfterDeletion finds a reply of after whose reasoning the shrink
// deleted whole right after another deletion. The engine's chunk scan
// would then find only the reply's role header kept between the two
// deletions, too short to reuse, and reuse nothing after it (runs.go). It
// returns the index of the reply in after, or -1, and the reasoning
// deleted.
func reasoningAfterDeletion(before, after []Message) (int, string) {
	for _, r := range repliesAfterDeletion(before, after) {
		if r.old.Reasoning != "" && after[r.at].Reasoning == "" {
			return r.at, r.old.Reasoning
		}
	}
	return -1, ""
}

// replyAfter is a reply of after at index at, which was old in before.
type replyAfter struct {
	at  int
	old Message
}

// repliesAfterDeletion lists the replies of after that come right after a
// deletion: the message before each is not the one that was before it.
func repliesAfterDeletion(before, after []Message) []replyAfter {
	var out []replyAfter
	j := 0
	for i, m := range after {
		for j < len(before) && !isDeletion(before[j], m) {
			j++
		}
		if j == len(before) {
			break
		}
		if m.Role == RoleAssistant && i > 0 && j > 0 && !after[i-1].Equal(before[j-1]) {
			out = append(out, replyAfter{i, before[j]})
		}
		j++
	}
	return out
}

func isDeletion(old, m Message) bool {
	if old.Role != m.Role || old.ToolCallID != m.ToolCallID || len(old.ToolCalls) != len(m.ToolCalls) ||
		!strings.HasPrefix(old.Content, m.Content) || m.Content != old.Content && m.Role != RoleTool && !(IsAside(old) && m.Content == firstLine(old.Content)) ||
		m.Reasoning != "" && m.Reasoning != old.Reasoning {
		return false
	}
	for k, c := range m.ToolCalls {
		o := old.ToolCalls[k]
		if c.ID != o.ID || c.Name != o.Name || !spanCut(o.Arguments, c.Arguments) {
			return false
		}
	}
	return true
}

// spanCut reports whether cut is whole with one or more spans deleted.
func spanCut(whole, cut string) bool {
	j := 0
	for i := 0; i < len(cut); i++ {
		for j < len(whole) && whole[j] != cut[i] {
			j++
		}
		if j == len(whole) {
			return false
		}
		j++
	}
	return true
}

// round answers the last request with a reply and random results.
func (s *sim) round() {
	n := 1 + s.rng.Intn(3)
	reply := Message{Content: s.text(s.rng.Intn(300))}
	if s.rng.Intn(2) == 0 {
		reply.Reasoning = s.text(100 + s.rng.Intn(3000))
	}
	for i := 0; i < n; i++ {
		args := `{"path":"a.go"}`
		if s.rng.Intn(6) == 0 {
			args = fmt.Sprintf(`{"path":"b.go","content":%q}`, s.text(2000))
		}
		reply.ToolCalls = append(reply.ToolCalls, ToolCall{ID: fmt.Sprintf("c%d-%d", s.reqs, i), Name: "read", Arguments: args})
	}
	it := s.m.H.AddRound(reply)
	for _, c := range it.Assistant.ToolCalls {
		s.m.H.AddResult(s.result(c.ID))
	}
}

func (s *sim) result(id string) *Result {
	switch k := s.rng.Intn(6); k {
	case 0, 1:
		size := 200 + s.rng.Intn(20000)
		if s.rng.Intn(10) == 0 {
			size = 100000 + s.rng.Intn(400000)
		}
		text := s.text(size)
		lines := strings.Count(text, "\n") + 1
		path := fmt.Sprintf("src/f%d.go", s.rng.Intn(40))
		return &Result{CallID: id, Tool: "read", Kind: KindRead, Text: text, Path: path, StartLine: 1, EndLine: lines, TotalLines: lines,
			Summary: fmt.Sprintf("Read %s lines 1-%d of %d", path, lines, lines)}
	case 2:
		text := s.text(100 + s.rng.Intn(60000))
		return &Result{CallID: id, Tool: "bash", Kind: KindBash, Text: text, SavedTo: "/tmp/reika/bash-1.txt", Summary: "bash `go test`: exit 1"}
	case 3:
		return &Result{CallID: id, Tool: "grep", Kind: KindGrep, Text: s.text(50 + s.rng.Intn(5000)), Query: "func", Summary: `grep "func": 12 matches`}
	case 4:
		diff := "--- a/x.go\n+++ b/x.go\n@@ -1,3 +1,4 @@\n" + s.text(1000+s.rng.Intn(4000))
		return &Result{CallID: id, Tool: "edit", Kind: KindEdit, Text: diff, Path: "x.go", Summary: "Edited x.go (1 hunk)"}
	default:
		return &Result{CallID: id, Tool: "grep", Kind: KindGrep, Text: "no matches", Summary: `grep "zzz": 0 matches`}
	}
}

func TestRandomSessionsKeepInvariants(t *testing.T) {
	windows := []int{8000, 16000, 24000, 32000, 128000}
	for seed := int64(1); seed <= 12; seed++ {
		w := windows[int(seed)%len(windows)]
		t.Run(fmt.Sprintf("seed%d-w%d", seed, w), func(t *testing.T) {
			s := newSim(t, seed, w)
			for turn := 0; turn < 4; turn++ {
				s.startTurn()
				for r := 0; r < 60; r++ {
					s.request()
					s.round()
				}
				s.request()
				s.m.H.AddRound(Message{Content: "done"})
			}
			if s.diverg != s.events {
				t.Errorf("%d requests diverged from their predecessor, %d shrink events", s.diverg, s.events)
			}
			if s.events == 0 {
				t.Errorf("no shrink event in %d requests", s.reqs)
			}
			t.Logf("%d requests, %d sheds, %d folds, %d notes, ratio %.2f", s.reqs, s.sheds, s.folds, s.notes, s.m.est.LearnedRatio())
		})
	}
}

func TestAppendOnlyBelowShedPoint(t *testing.T) {
	// A window so large that 300 rounds never reach the shed point: every
	// request is the previous one plus the new round, byte for byte.
	s := newSim(t, 42, 10_000_000)
	s.startTurn()
	for r := 0; r < 300; r++ {
		msgs := s.request()
		if s.events > 0 {
			t.Fatalf("a shrink at request %d below the shed point", s.reqs)
		}
		_ = msgs
		s.round()
	}
	if s.diverg != 0 {
		t.Errorf("%d requests were not appends", s.diverg)
	}
}

func TestNoWindowSessions(t *testing.T) {
	s := newSim(t, 7, 0)
	s.m.Setup().Configure(Settings{ReasoningRounds: 2})
	s.startTurn()
	for r := 0; r < 40; r++ {
		s.request()
		// Older results are summaries, the newest round's are whole.
		h := s.m.H
		for i, it := range h.Items {
			if !it.IsRound() {
				continue
			}
			for _, res := range it.Results {
				if _, _, ok := shedEntry(it.Round, res, s.m.outline, noWindowBudget); i < len(h.Items)-1 && !res.Shed && ok {
					t.Fatalf("round %d: an older result was not collapsed", it.Round)
				}
				if i == len(h.Items)-1 && res.Shed {
					t.Fatalf("the newest round was collapsed")
				}
			}
			if it.Assistant.Reasoning != "" && !it.ReasoningShed && h.Rounds()-it.Round >= 2 {
				t.Fatalf("round %d keeps its reasoning %d rounds later", it.Round, h.Rounds()-it.Round)
			}
			if h.Rounds()-it.Round < 2 && it.ReasoningShed {
				t.Fatalf("round %d lost its reasoning too early", it.Round)
			}
		}
		if s.m.H.Folded != 0 {
			t.Fatal("a fold without a window")
		}
		s.round()
	}
	if c := s.m.Gauge().Chip(); strings.Contains(c.Text, "%") || c.Window != 0 {
		t.Errorf("no-window chip %+v", c)
	}
	if ok, why := s.m.CanCompact(); ok || !strings.Contains(why, "Nothing to fold against") {
		t.Errorf("compact without a window: %v %q", ok, why)
	}
	if got := s.m.Gauge().MaxTokens(); got != 0 {
		t.Errorf("max_tokens without a window %d, want 0 (left to the server)", got)
	}
	for _, it := range s.m.H.Items {
		for _, r := range it.Results {
			if r.Cut {
				t.Fatal("a result was cut without a window")
			}
		}
	}
}

// FuzzSessions runs random sessions at random windows; the invariants are
// checked on every request (sim.check).
func FuzzSessions(f *testing.F) {
	f.Add(int64(1), uint16(16000), uint8(40))
	f.Add(int64(2), uint16(0), uint8(20))
	f.Add(int64(3), uint16(5000), uint8(80))
	f.Fuzz(func(t *testing.T, seed int64, window uint16, rounds uint8) {
		w := int(window)
		if w != 0 && w < 4000 {
			w += 4000
		}
		s := newSim(t, seed, w)
		s.startTurn()
		for r := 0; r < int(rounds); r++ {
			s.request()
			s.round()
			if s.rng.Intn(15) == 0 {
				s.request()
				s.m.H.AddRound(Message{Content: "answer"})
				s.startTurn()
			}
		}
		s.request()
		if s.diverg != s.events {
			t.Errorf("%d divergences, %d events", s.diverg, s.events)
		}
	})
}
