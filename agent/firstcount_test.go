package agent_test

import (
	"context"
	"sync"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
)

// statusSpy records the sizes the status showed, and how many chat
// requests the engine had answered at each.
type statusSpy struct {
	collector
	answered func() int
	mu2      sync.Mutex
	sizes    []int
	at       []int
}

func (s *statusSpy) Status(st agent.Status) {
	s.mu2.Lock()
	s.sizes, s.at = append(s.sizes, st.Size), append(s.at, s.answered())
	s.mu2.Unlock()
}

// firstSize is the last size the status showed before the engine answered
// the first request.
func (s *statusSpy) firstSize() int {
	s.mu2.Lock()
	defer s.mu2.Unlock()
	size := 0
	for i, n := range s.sizes {
		if s.at[i] == 0 && n > 0 {
			size = n
		}
	}
	return size
}

// TestFirstRequestCounted: on llama.cpp the status before the first
// request counts it as the engine will (tool definitions and chat template
// included: POST /apply-template, then /tokenize), within 2% of the prompt
// tokens the engine reports for it.
func TestFirstRequestCounted(t *testing.T) {
	var mu sync.Mutex
	answered := 0
	srv := enginetest.New(enginetest.Options{Shape: enginetest.ShapeLlamaCpp, Window: 16384, CharsPerToken: 2.5, Script: func(r *enginetest.Request) enginetest.Reply {
		mu.Lock()
		answered++
		mu.Unlock()
		return enginetest.Text("done")
	}})
	defer srv.Close()
	spy := &statusSpy{answered: func() int { mu.Lock(); defer mu.Unlock(); return answered }}
	a := newAgent(t, srv, t.TempDir(), agent.Settings{}, spy)
	if res := a.Ask(context.Background(), agent.AskParams{Prompt: "say done"}); res.Status != agent.AskDone {
		t.Fatalf("turn ended %s: %s", res.Status, res.Message)
	}
	var prompt int
	for _, r := range srv.Requests() {
		if r.Path == "/v1/chat/completions" {
			prompt = r.PromptTokens
			break
		}
	}
	shown := spy.firstSize()
	t.Logf("the status showed %d before the first request; the engine counted %d", shown, prompt)
	if d := float64(shown-prompt) / float64(prompt); d > 0.02 || d < -0.02 {
		t.Errorf("the status showed %d tokens before the first request, the engine counted %d (%+.1f%%)", shown, prompt, 100*d)
	}
}
