package agent_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
)

// TestSettingsChangeWhileTheSessionStarts changes maxTokens while the
// first ask's session is being started (at the write of its log's first
// record, after it read the settings): the session still gets the change,
// from its first request, and the transcript says so.
func TestSettingsChangeWhileTheSessionStarts(t *testing.T) {
	srv := enginetest.New(enginetest.Options{Window: 32000})
	defer srv.Close()
	col := &collector{shrinkBefore: map[int]bool{}}
	a, base := reconfigurable(t, srv, diskWorkspace{root: t.TempDir()}, col)
	changed := base
	changed.MaxTokens = 1500
	var once sync.Once
	agent.SetLogFault(a, func(int64, int) error {
		once.Do(func() {
			if err := a.UpdateSettings(changed); err != nil {
				t.Error(err)
			}
		})
		return nil
	})
	if res := a.Ask(context.Background(), agent.AskParams{Prompt: "hi"}); res.Status != agent.AskDone {
		t.Fatalf("the turn: %+v", res)
	}
	reqs := mainRequests(srv)
	if len(reqs) == 0 || reqs[0].MaxTokens != 1500 {
		t.Errorf("the first request's max_tokens: %+v, want 1500", reqs)
	}
	var said []string
	for _, e := range col.kinds(agent.EventInfo) {
		said = append(said, e.Text)
	}
	if len(said) != 1 || !strings.Contains(said[0], "maxTokens 0 → 1500") || !strings.Contains(said[0], "applied from round 1") {
		t.Errorf("the transcript says %q, want the change from round 1", said)
	}
}
