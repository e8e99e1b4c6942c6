package agent_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/engine"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
)

type lines struct {
	mu sync.Mutex
	l  []string
}

func (l *lines) logf(f string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.l = append(l.l, fmt.Sprintf(f, a...))
}

func (l *lines) with(sub string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.l {
		if strings.Contains(s, sub) {
			out = append(out, s)
		}
	}
	return out
}

// TestDebugLineAcrossRestarts: REIKA_DEBUG's prefix-cache line says when a
// session was resumed (not "first request") and when the engine lost its
// cache between two rounds.
func TestDebugLineAcrossRestarts(t *testing.T) {
	srv := enginetest.New(enginetest.Options{Window: 16384, Script: enginetest.Echo()})
	defer srv.Close()
	root, state := t.TempDir(), t.TempDir()
	start := func(resume bool, log *lines) *agent.Agent {
		model, err := engine.New(engine.Config{BaseURL: srv.URL(), CacheDir: t.TempDir(), ModelsURL: "http://127.0.0.1:1/never"})
		if err != nil {
			t.Fatal(err)
		}
		a, err := agent.New(agent.Options{Workspace: diskWorkspace{root: root}, Model: model, Settings: agent.Settings{Debug: true, Approve: agent.ApproveAll},
			StateDir: state, Logf: log.logf, Resume: resume})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	ask := func(a *agent.Agent, p string) {
		if res := a.Ask(context.Background(), agent.AskParams{Prompt: p}); res.Status != agent.AskDone {
			t.Fatalf("ask %q: %+v", p, res)
		}
	}
	first := &lines{}
	a := start(false, first)
	ask(a, "one")
	ask(a, "two")
	srv.Restart()
	ask(a, "three")
	a.Close()
	dbg := first.with("prefix-cache round")
	if len(dbg) != 3 || !strings.Contains(dbg[0], "first request;") || !strings.Contains(dbg[1], "append") || strings.Contains(dbg[1], "lost") {
		t.Fatalf("debug lines:\n%s", strings.Join(dbg, "\n"))
	}
	if !strings.Contains(dbg[2], "append") || !strings.Contains(dbg[2], "cache was lost") {
		t.Errorf("after the restart: %s", dbg[2])
	}

	second := &lines{}
	b := start(true, second)
	defer b.Close()
	ask(b, "four")
	dbg = second.with("prefix-cache round")
	if len(dbg) != 1 || !strings.Contains(dbg[0], "round 4: first request since the session was resumed") {
		t.Errorf("after --continue: %v", dbg)
	}
}
