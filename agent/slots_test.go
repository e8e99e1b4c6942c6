package agent_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
)

// TestSlotsAt128k: a shed-heavy session at a 128k window on llama-server's
// default slots (4 sharing one KV cache) processes within 5% of the
// prompt tokens it processes on one slot: its requests name their slot, so
// a request that a shed leaves sharing less than a tenth with its slot's
// prompt stays there and reuses its rounds.
func TestSlotsAt128k(t *testing.T) {
	if testing.Short() {
		t.Skip("a 128k session")
	}
	root := t.TempDir()
	files := goFiles(t, root, 24, 7000, 40000)
	processed := map[int]int{}
	for _, slots := range []int{1, enginetest.DefaultSlots} {
		t.Run(fmt.Sprintf("%d slots", slots), func(t *testing.T) {
			var mu sync.Mutex
			main := 0
			srv := enginetest.New(enginetest.Options{Shape: enginetest.ShapeLlamaCpp, Window: 131072, Slots: slots, KVUnified: slots > 1,
				Script: cycleScript(files, &main, &mu)})
			defer srv.Close()
			col := &collector{shrinkBefore: map[int]bool{}, mainCount: func() int { mu.Lock(); defer mu.Unlock(); return main }}
			a := newAgent(t, srv, root, agent.Settings{}, col)
			if res := a.Ask(context.Background(), agent.AskParams{Prompt: cycleTask}); res.Status != agent.AskDone {
				t.Fatalf("turn ended %s: %s", res.Status, res.Message)
			}
			requests, prompt, sheds := 0, 0, len(col.kinds(agent.EventShed))+len(col.kinds(agent.EventFold))
			slotsUsed := map[int]bool{}
			for _, r := range srv.Requests() {
				if r.Path == "/v1/chat/completions" {
					requests++
					prompt += r.PromptTokens
					processed[slots] += r.PromptN
					slotsUsed[r.Slot] = true
				}
			}
			t.Logf("%d slots: %d requests, %d events, %d prompt tokens, %d processed, slots used %v", slots, requests, sheds, prompt, processed[slots], slotsUsed)
			if sheds < 2 {
				t.Errorf("%d sheds or folds: not a shed-heavy session", sheds)
			}
		})
	}
	if one, four := processed[1], processed[enginetest.DefaultSlots]; one == 0 || float64(four) > 1.05*float64(one) {
		t.Errorf("on 4 slots the session processed %d tokens, on one %d (%.2f×)", four, one, float64(four)/float64(max(one, 1)))
	}
}
