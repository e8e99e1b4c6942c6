package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/engine"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
	"github.com/reika-lsp/reika-lsp/internal/deptest"
)

func TestImports(t *testing.T) {
	deptest.Forbid(t, "github.com/reika-lsp/reika-lsp/agent", "go.lsp.dev", "github.com/sashabaranov/go-openai")
}

// readLoop reads the files in turn, forever, answering notes.
func readLoop(files []string) enginetest.Script {
	var mu sync.Mutex
	i := 0
	return func(r *enginetest.Request) enginetest.Reply {
		mu.Lock()
		defer mu.Unlock()
		if r.ToolChoice == "none" {
			return enginetest.Text("NOTE: still reading")
		}
		f := files[i%len(files)]
		i++
		return enginetest.Call("read", fmt.Sprintf(`{"path":%q}`, f))
	}
}

// learned parses the learned chars/token from the status tooltip.
func learned(t *testing.T, st agent.Status) float64 {
	t.Helper()
	m := regexp.MustCompile(`Estimate: ([0-9.]+) chars/token learned`).FindStringSubmatch(st.Tooltip)
	if m == nil {
		t.Fatalf("no learned estimate in the tooltip:\n%s", st.Tooltip)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

func TestEstimateAndReserveLearn(t *testing.T) {
	for _, cpt := range []float64{2.5, 5} {
		t.Run(fmt.Sprint(cpt), func(t *testing.T) {
			root := t.TempDir()
			// Prose, which the engine tokenizes at its stated density.
			var files []string
			for i := 0; i < 6; i++ {
				name := fmt.Sprintf("notes%d.txt", i)
				os.WriteFile(filepath.Join(root, name), []byte(strings.Repeat("The quick brown fox jumps over the lazy dog near the river bank. ", 60)), 0o644)
				files = append(files, name)
			}
			steps := 0
			srv := enginetest.New(enginetest.Options{Window: 32000, CharsPerToken: cpt, Script: func(r *enginetest.Request) enginetest.Reply {
				steps++
				if steps > 4 {
					// A long answer teaches the reserve.
					return enginetest.Text(strings.Repeat("word ", 4000))
				}
				return enginetest.Call("read", fmt.Sprintf(`{"path":%q}`, files[steps]))
			}})
			defer srv.Close()
			a := newAgent(t, srv, root, agent.Settings{}, &collector{shrinkBefore: map[int]bool{}})
			if res := a.Ask(context.Background(), agent.AskParams{Prompt: "read"}); res.Status != agent.AskDone {
				t.Fatalf("%+v", res)
			}
			got := learned(t, a.Status())
			// The fake's code density is near its prose density; what is
			// learned must be on the right side of the 4 chars/token baseline.
			if cpt < 4 && got >= 4 || cpt > 4 && got <= 4 {
				t.Errorf("engine at %.1f chars/token: learned %.2f", cpt, got)
			}
			// Kept across turns: a second turn starts from it.
			steps = 100
			a.Ask(context.Background(), agent.AskParams{Prompt: "again"})
			if again := learned(t, a.Status()); again <= 0 {
				t.Error("the estimate was lost across turns")
			}
			if !strings.Contains(a.Status().Tooltip, "Reserve: ") {
				t.Fatal("no reserve in the tooltip")
			}
			m := regexp.MustCompile(`Reserve: (\d+)`).FindStringSubmatch(a.Status().Tooltip)
			if r, _ := strconv.Atoi(m[1]); r <= 2048 || r > 32000/4 {
				t.Errorf("reserve %d after a long completion, want above 2048 and at most a quarter of the window", r)
			}
		})
	}
}

func TestOverflowShrinksAndRetriesOnce(t *testing.T) {
	root := t.TempDir()
	// New files all along: a model that reads the same few files round
	// and round is stopped by the thrash guard, which is not this test.
	files := goFiles(t, root, 30, 3000, 9000)
	// The user says 48k; the engine has 16k.
	reads := readLoop(files)
	n := 0
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: func(r *enginetest.Request) enginetest.Reply {
		if r.ToolChoice != "none" {
			n++
		}
		if n > 30 {
			return enginetest.Text("done")
		}
		return reads(r)
	}})
	defer srv.Close()
	col := &collector{shrinkBefore: map[int]bool{}}
	a := newAgent(t, srv, root, agent.Settings{ContextWindow: 48000}, col)
	res := a.Ask(context.Background(), agent.AskParams{Prompt: "read everything"})
	if res.Status != agent.AskDone {
		t.Fatalf("the turn did not recover from the overflow: %+v", res)
	}
	recs := srv.Requests()
	first := -1
	for i, r := range recs {
		if r.Overflowed {
			first = i
			break
		}
	}
	if first < 0 {
		t.Fatalf("the engine never overflowed (%d requests, %+v)", len(recs), res)
	}
	// Each overflow is followed by one smaller retry, never a loop.
	for i := first; i < len(recs)-1; i++ {
		if recs[i].Overflowed && recs[i+1].Overflowed {
			t.Fatalf("requests %d and %d both overflowed: the agent retried without shrinking", i, i+1)
		}
		if recs[i].Overflowed && recs[i+1].PromptTokens >= recs[i].PromptTokens {
			t.Errorf("the retry after request %d is not smaller (%d → %d tokens)", i, recs[i].PromptTokens, recs[i+1].PromptTokens)
		}
	}
	if st := a.Status(); st.WindowSource != llm.SourceOverflow || st.Window == nil || *st.Window != 16000 {
		t.Errorf("the window stated by the overflow was not adopted: %+v", st)
	}
}

func TestThrashGuardStops(t *testing.T) {
	root := t.TempDir()
	srv := enginetest.New(enginetest.Options{Window: 8192, Script: func(r *enginetest.Request) enginetest.Reply {
		if r.ToolChoice == "none" {
			return enginetest.Text("NOTE")
		}
		// Every round writes more than the shed cycle can hold.
		return enginetest.Reply{Content: strings.Repeat("A long essay that cannot be shed. ", 140), ToolCalls: []ctxwin.ToolCall{{Name: "glob", Arguments: `{"pattern":"*.none"}`}}}
	}})
	defer srv.Close()
	col := &collector{shrinkBefore: map[int]bool{}}
	a := newAgent(t, srv, root, agent.Settings{}, col)
	res := a.Ask(context.Background(), agent.AskParams{Prompt: "write"})
	if res.Status != agent.AskError || !strings.Contains(res.Message, "made no progress") || !strings.Contains(res.Message, `glob "*.none"`) {
		t.Fatalf("a thrashing session was not stopped: %+v", res)
	}
	if n := len(col.kinds(agent.EventFold)); n > ctxwin.ThrashLimit+1 {
		t.Errorf("%d folds before the stop", n)
	}
}

func TestDebugLine(t *testing.T) {
	root := t.TempDir()
	files := goFiles(t, root, 30, 1500, 7000)
	var mu sync.Mutex
	main := 0
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: cycleScript(files, &main, &mu)})
	defer srv.Close()
	model, _ := engine.New(engine.Config{BaseURL: srv.URL(), CacheDir: t.TempDir()})
	var lines []string
	var lmu sync.Mutex
	a, err := agent.New(agent.Options{Workspace: diskWorkspace{root: root}, Model: model, StateDir: t.TempDir(),
		Settings: agent.Settings{Debug: true, Approve: agent.ApproveAll},
		Logf: func(f string, args ...any) {
			lmu.Lock()
			lines = append(lines, fmt.Sprintf(f, args...))
			lmu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	a.Ask(context.Background(), agent.AskParams{Prompt: cycleTask})
	var appends, diverged, reused int
	re := regexp.MustCompile(`^reika: prefix-cache round \d+: (append \(\+\d+ messages\)|diverged at message \d+ \(.+\)|first request); reprocessed (\d+) tokens in [0-9.]+s \(cache (\d+)\)(; reused about \d+ tokens in chunks beyond the common prefix)?$`)
	for _, l := range lines {
		if !strings.Contains(l, "prefix-cache") {
			continue
		}
		m := re.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("debug line of the wrong form: %q", l)
			continue
		}
		if m[4] != "" {
			reused++
		}
		switch {
		case strings.HasPrefix(m[1], "append"):
			appends++
		case strings.HasPrefix(m[1], "diverged"):
			diverged++
		}
	}
	// The fake engine shifts its cache (llama.cpp's chunk reuse): shrink
	// events, deletions, are reused past their first difference.
	if appends == 0 || diverged == 0 || reused == 0 {
		t.Errorf("%d append lines, %d divergence lines, %d naming reused chunks", appends, diverged, reused)
	}
	// No shrink let the engine's host memory restore an earlier prompt in
	// place of the slot's own, which its chunks would have served
	// (ctxwin's foldMarks): the events keep a tagged opening where they
	// delete.
	for _, q := range srv.Requests() {
		if q.Restored {
			t.Errorf("request %d: the engine restored an earlier prompt from host memory (%d of %d tokens processed)", q.Request.Index, q.PromptN, q.PromptTokens)
		}
	}
}

func TestSecondAskRefusedAndCancel(t *testing.T) {
	root := t.TempDir()
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: func(r *enginetest.Request) enginetest.Reply {
		return enginetest.Reply{Content: "slow", Fault: enginetest.Fault{FirstByteDelay: 20 * time.Second}}
	}})
	defer srv.Close()
	a := newAgent(t, srv, root, agent.Settings{}, &collector{shrinkBefore: map[int]bool{}})
	done := make(chan agent.AskResult)
	go func() { done <- a.Ask(context.Background(), agent.AskParams{Prompt: "first"}) }()
	for len(srv.Requests()) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	second := a.Ask(context.Background(), agent.AskParams{Prompt: "second"})
	if second.Status != agent.AskError || !strings.Contains(second.Message, "a turn is already running") {
		t.Errorf("second ask: %+v", second)
	}
	if !a.Status().Busy {
		t.Error("status not busy during a turn")
	}
	if !a.Cancel() {
		t.Fatal("Cancel found no turn")
	}
	select {
	case res := <-done:
		if res.Status != agent.AskCancelled {
			t.Errorf("cancelled turn: %+v", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the turn did not stop")
	}
	if a.Cancel() {
		t.Error("Cancel with no turn running returned true")
	}
	// The transcript an editor reloads keeps the "Cancelled." line.
	page, err := a.Transcript(0)
	if n := len(page.Events); err != nil || n == 0 || page.Events[n-1].Kind != agent.EventInfo || page.Events[n-1].Text != "Cancelled." {
		t.Errorf("the transcript after a cancel: %v %+v", err, page.Events)
	}
}

// A reply a cancel cuts off mid-stream stays in the transcript an editor
// reloads, before "Cancelled.", and out of what the model is sent next.
func TestCancelKeepsTheCutReplyInTheTranscript(t *testing.T) {
	root := t.TempDir()
	var mu sync.Mutex
	var sent []string
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: func(r *enginetest.Request) enginetest.Reply {
		var body strings.Builder
		for _, m := range r.Messages {
			body.WriteString(m.Content + "\n")
		}
		mu.Lock()
		sent = append(sent, body.String())
		n := len(sent)
		mu.Unlock()
		if n == 1 {
			return enginetest.Reply{Content: "Once upon a time there was a tiny program", Fault: enginetest.Fault{Hold: true, AfterChunks: 3}}
		}
		return enginetest.Text("fine")
	}})
	defer srv.Close()
	col := &collector{shrinkBefore: map[int]bool{}}
	a := newAgent(t, srv, root, agent.Settings{}, col)
	done := make(chan agent.AskResult)
	go func() { done <- a.Ask(context.Background(), agent.AskParams{Prompt: "tell a story"}) }()
	shown := func() string { // the reply text streamed so far
		col.mu.Lock()
		defer col.mu.Unlock()
		var b strings.Builder
		for _, e := range col.events {
			if e.Kind == agent.EventAssistant && e.Delta {
				b.WriteString(e.Text)
			}
		}
		return b.String()
	}
	for deadline := time.Now().Add(hangGuard); shown() == "" && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	streamed := shown()
	if streamed == "" {
		t.Fatal("no reply text streamed")
	}
	a.Cancel()
	if res := <-done; res.Status != agent.AskCancelled {
		t.Fatalf("the turn: %+v", res)
	}
	page, err := a.Transcript(0)
	if err != nil {
		t.Fatal(err)
	}
	n := len(page.Events)
	if n < 2 || page.Events[n-2].Kind != agent.EventAssistant || page.Events[n-2].Text != streamed || page.Events[n-1].Text != "Cancelled." {
		t.Errorf("the transcript after a cancel mid-reply (streamed %q): %+v", streamed, page.Events)
	}
	if res := a.Ask(context.Background(), agent.AskParams{Prompt: "go on"}); res.Status != agent.AskDone {
		t.Fatalf("the next turn: %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if last := sent[len(sent)-1]; strings.Contains(last, "tiny program") || strings.Contains(last, streamed) {
		t.Errorf("the cut reply reached the model: %s", last)
	}
}

func TestEngineUnreachable(t *testing.T) {
	model, _ := engine.New(engine.Config{BaseURL: "http://127.0.0.1:1/v1", CacheDir: t.TempDir(), DownWait: -1})
	col := &collector{shrinkBefore: map[int]bool{}}
	a, err := agent.New(agent.Options{Workspace: diskWorkspace{root: t.TempDir()}, Model: model, StateDir: t.TempDir(), Events: col})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	res := a.Ask(context.Background(), agent.AskParams{Prompt: "hi"})
	if res.Status != agent.AskError || !strings.Contains(res.Message, "unreachable at http://127.0.0.1:1/v1") {
		t.Errorf("ask with no engine: %+v", res)
	}
	if st := a.Status(); st.Level != agent.LevelError {
		t.Errorf("status level %q with no engine", st.Level)
	}
	errs := 0
	for _, n := range col.notices {
		if n.Level == agent.LevelError {
			errs++
		}
	}
	if errs != 1 {
		t.Errorf("%d error notices, want exactly one while the engine stays down", errs)
	}
}

func TestSaveKeepsEverythingAndPrefixIsFixed(t *testing.T) {
	root := t.TempDir()
	files := goFiles(t, root, 40, 1500, 7000)
	os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("Always run go vet."), 0o644)
	var mu sync.Mutex
	main := 0
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: cycleScript(files[:25], &main, &mu)})
	defer srv.Close()
	a := newAgent(t, srv, root, agent.Settings{}, &collector{shrinkBefore: map[int]bool{}})
	a.Ask(context.Background(), agent.AskParams{Prompt: cycleTask})
	a.Ask(context.Background(), agent.AskParams{Prompt: "a second turn"})
	var system string
	for _, r := range srv.Requests() {
		if r.Path != "/v1/chat/completions" {
			continue
		}
		s := r.Request.Messages[0].Content
		if system == "" {
			system = s
		} else if s != system {
			t.Fatalf("the fixed prefix changed at request %d", r.Index)
		}
	}
	if !strings.Contains(system, "Always run go vet.") {
		t.Error("AGENTS.md is not in the fixed prefix")
	}
	// The repo map lists the workspace's files within its budget.
	start, end := strings.Index(system, "<repo-map>"), strings.Index(system, "</repo-map>")
	if start < 0 || end < start || !strings.Contains(system[start:end], "src/") {
		t.Errorf("no repo map of the workspace in the fixed prefix:\n%.2000s", system)
	} else if n := end - start - len("<repo-map>\n"); n > ctxwin.RepoMapChars(16000) {
		t.Errorf("repo map of %d chars, budget %d", n, ctxwin.RepoMapChars(16000))
	}
	path, err := a.Save("saved/transcript.md")
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files[:25] {
		data, _ := os.ReadFile(filepath.Join(root, f))
		// The read's whole numbered text is there: check a middle line.
		lines := strings.Split(string(data), "\n")
		mid := lines[len(lines)/2]
		if !strings.Contains(string(md), mid) {
			t.Fatalf("the saved transcript lacks line %q of %s", mid, f)
		}
	}
	for _, want := range []string{"## Turn 1", "## Turn 2", "_Folded ", "Note before the fold", cycleTask} {
		if !strings.Contains(string(md), want) {
			t.Errorf("the saved transcript lacks %q", want)
		}
	}
}

func TestMinimalModeDropsProjectContext(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("Always run go vet."), 0o644)
	srv := enginetest.New(enginetest.Options{Window: 16000})
	defer srv.Close()
	a := newAgent(t, srv, root, agent.Settings{Minimal: true}, nil)
	a.Ask(context.Background(), agent.AskParams{Prompt: "hi"})
	sys := srv.Requests()[len(srv.Requests())-1].Request.Messages[0].Content
	if strings.Contains(sys, "go vet") || strings.Contains(sys, "<repo-map>") {
		t.Errorf("minimal mode keeps project context:\n%s", sys)
	}
}

func TestResumeReplaysTheLog(t *testing.T) {
	root := t.TempDir()
	files := goFiles(t, root, 40, 1500, 7000)
	state := t.TempDir()
	var mu sync.Mutex
	main := 0
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: cycleScript(files[:20], &main, &mu)})
	defer srv.Close()
	start := func() *agent.Agent {
		model, _ := engine.New(engine.Config{BaseURL: srv.URL(), CacheDir: t.TempDir()})
		a, err := agent.New(agent.Options{Workspace: diskWorkspace{root: root}, Model: model, StateDir: state, Resume: true,
			Settings: agent.Settings{Approve: agent.ApproveAll}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a := start()
	a.Ask(context.Background(), agent.AskParams{Prompt: cycleTask})
	before := srv.Requests()
	lastMsgs := before[len(before)-1].Request.Messages
	a.Close()

	b := start()
	defer b.Close()
	srv.SetScript(func(r *enginetest.Request) enginetest.Reply { return enginetest.Text("resumed") })
	b.Ask(context.Background(), agent.AskParams{Prompt: "continue"})
	after := srv.Requests()
	next := after[len(after)-1].Request.Messages
	// The resumed request starts with what the model last saw, and the
	// answer to it.
	if d := ctxwin.Diverge(lastMsgs, next); !d.Append {
		t.Fatalf("the resumed request diverges at message %d from the last one before the restart", d.Index)
	}
	if !b.HasTurns() {
		t.Error("the resumed session has no turns")
	}
}

func TestOverflowThatCannotShrinkFailsOnce(t *testing.T) {
	srv := enginetest.New(enginetest.Options{Window: 4096})
	defer srv.Close()
	a := newAgent(t, srv, t.TempDir(), agent.Settings{ContextWindow: 64000}, nil)
	res := a.Ask(context.Background(), agent.AskParams{Prompt: strings.Repeat("a very long prompt ", 3000)})
	// The prompt alone is larger than the engine's window: say so, with the
	// sizes and what would help (an empty workspace: no repo map or
	// AGENTS.md for REIKA_MINIMAL to drop; the task is what is large).
	if res.Status != agent.AskError || !strings.Contains(res.Message, "engine's window of 4096 tokens") ||
		strings.Contains(res.Message, "REIKA_MINIMAL") || !strings.Contains(res.Message, "llama-server -c") ||
		!strings.Contains(res.Message, "shorter prompt") {
		t.Fatalf("%+v", res)
	}
	n := 0
	for _, r := range srv.Requests() {
		if r.Path == "/v1/chat/completions" {
			n++
		}
	}
	if n > 2 {
		t.Errorf("%d requests for one overflow: want the request and at most one retry", n)
	}
}
