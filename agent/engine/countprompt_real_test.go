package engine

import (
	"context"
	"sync"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/internal/llamaserver"
)

// sizeSpy records the size of each status the agent published.
type sizeSpy struct {
	mu    sync.Mutex
	sizes []int
}

func (s *sizeSpy) Transcript(agent.Event)  {}
func (s *sizeSpy) Notice(agent.Notice)     {}
func (s *sizeSpy) Progress(agent.Progress) {}
func (s *sizeSpy) Status(st agent.Status) {
	s.mu.Lock()
	s.sizes = append(s.sizes, st.Size)
	s.mu.Unlock()
}

// TestRealFirstRequestCounted: on llama-server the status published
// before a session's first request counts it as the server does (the tool
// definitions and the chat template included: POST /apply-template with
// the messages and tools, then /tokenize), within 2% of its prompt_n.
func TestRealFirstRequestCounted(t *testing.T) {
	tree := llamaserver.Find(t)
	srv := llamaserver.Start(t, tree, llamaserver.Config{Model: llamaserver.ToolCallerModel(t, subCaller), Ctx: 8192, Args: llamaserver.ToolCallerArgs})
	c, _ := realClient(t, srv)
	rec := &recordingModel{Client: c}
	spy := &sizeSpy{}
	dbg := &logs{}
	a, err := agent.New(agent.Options{Workspace: emptyWorkspace{root: t.TempDir()}, Model: rec, StateDir: t.TempDir(), Logf: dbg.logf, Events: spy,
		Settings: agent.Settings{Approve: agent.ApproveAll}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var before []int
	rec.before = func() {
		spy.mu.Lock()
		before = append([]int(nil), spy.sizes...)
		spy.mu.Unlock()
	}
	if res := a.Ask(context.Background(), agent.AskParams{Prompt: "say [[back]]"}); res.Status != agent.AskDone {
		t.Fatalf("ask: %+v\n%s", res, dbg)
	}
	if len(rec.reqs) == 0 || len(before) == 0 {
		t.Fatalf("no request or no status: %+v %v", rec.reqs, before)
	}
	shown, prompt := before[len(before)-1], rec.reqs[0].timings.PromptN+rec.reqs[0].timings.CacheN
	t.Logf("statuses before the first request %v; the server counted %d", before, prompt)
	if d := float64(shown-prompt) / float64(prompt); d > 0.02 || d < -0.02 {
		t.Errorf("the status showed %d tokens before the first request, the server counted %d (%+.1f%%)\n%s", shown, prompt, 100*d, dbg)
	}
}
