package agent_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
)

// loadingEvents releases a loading fake engine once the status says the
// engine is loading.
type loadingEvents struct {
	collector
	srv  *enginetest.Server
	once sync.Once
}

func (e *loadingEvents) Status(s agent.Status) {
	e.collector.Status(s)
	if strings.Contains(s.Text, agent.LoadingText) {
		e.once.Do(func() { e.srv.SetLoading(false) })
	}
}

// TestStatusWhileTheEngineLoads: while llama-server loads its model the
// status says so (and one notice), then the turn runs as usual.
func TestStatusWhileTheEngineLoads(t *testing.T) {
	srv := enginetest.New(enginetest.Options{Window: 8192, Loading: true, Script: enginetest.Sequence(enginetest.Text("loaded and answering"))})
	defer srv.Close()
	ev := &loadingEvents{srv: srv}
	a := newAgent(t, srv, t.TempDir(), agent.Settings{}, ev)
	res := a.Ask(context.Background(), agent.AskParams{Prompt: "hello"})
	if res.Status != agent.AskDone {
		t.Fatalf("ask: %+v", res)
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	loading := 0
	for _, s := range ev.statuses {
		if strings.Contains(s.Text, agent.LoadingText) {
			loading++
			if !strings.Contains(s.Tooltip, "loading its model") {
				t.Errorf("tooltip while loading: %q", s.Tooltip)
			}
		}
	}
	if loading == 0 {
		t.Error("no status said the engine was loading")
	}
	if last := ev.statuses[len(ev.statuses)-1]; strings.Contains(last.Text, agent.LoadingText) || strings.Contains(last.Tooltip, "loading its model") {
		t.Errorf("the last status still says loading: %+v", last)
	}
	n := 0
	for _, no := range ev.notices {
		if strings.Contains(no.Text, "loading its model") {
			n++
		}
		if strings.Contains(no.Text, "REIKA_MODEL") {
			t.Errorf("a misleading notice: %q", no.Text)
		}
	}
	if n != 1 {
		t.Errorf("%d loading notices, want 1: %+v", n, ev.notices)
	}
}
