package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/lsp/lsptest"
)

// cancelRightAfterBeginRounds is how many turns TestCancelRightAfterBegin
// starts and cancels: enough for -race and the scheduler to hit the moment
// between begin and the work, a few ms each.
const cancelRightAfterBeginRounds = 200

// TestCancelRightAfterBegin: a cancel sent the moment the client learns
// of a turn — the progress begin on its own token, or the server's create
// request for a token of its own — stops the turn, every time: through the
// progress (window/workDoneProgress/cancel) or reika.cancel, for asks and
// compactions alike. Run it with -race: the turn's progress handle was
// once set after begin went out, outside the lock the cancel reads it
// under, and a cancel in between was lost.
func TestCancelRightAfterBegin(t *testing.T) {
	h := start(t, harnessOptions{setup: func(f *fakeAgent) {
		f.Turn = func(ctx context.Context, f *fakeAgent, _ agent.AskParams) agent.AskResult {
			<-ctx.Done()
			return agent.AskResult{Session: f.Session(), Status: agent.AskCancelled}
		}
		f.Fold = func(ctx context.Context, _ *fakeAgent) agent.CompactResult {
			<-ctx.Done()
			return agent.CompactResult{Message: "Cancelled"}
		}
	}})
	h.initialized()
	var seenNotes, seenRequests int
	for i := 0; i < cancelRightAfterBeginRounds; i++ {
		compact, byCommand, serverToken := i%2 == 1, i/2%2 == 1, i/4%2 == 1
		params := map[string]any{"command": CmdAsk, "arguments": []any{map[string]any{"prompt": "work"}}}
		if compact {
			params = map[string]any{"command": CmdCompact, "arguments": []any{}}
		}
		token := fmt.Sprintf(`"t%d"`, i)
		if !serverToken {
			params["workDoneToken"] = json.RawMessage(token)
		}
		var res json.RawMessage
		done := h.c.Go(h.ctx, "workspace/executeCommand", params, &res)

		// Wait for the first sign of the turn the client gets.
		err := h.c.Wait(h.ctx, func(notes, requests []lsptest.Message) bool {
			if serverToken {
				for _, m := range requests[seenRequests:] {
					if m.Method == "window/workDoneProgress/create" {
						token = string(decode[struct{ Token json.RawMessage }](t, m.Params).Token)
						seenRequests = len(requests)
						return true
					}
				}
				return false
			}
			for _, m := range notes[seenNotes:] {
				if m.Method == "$/progress" && bytes.Contains(m.Params, []byte(`"token":`+token)) &&
					bytes.Contains(m.Params, []byte(`"kind":"begin"`)) {
					return true
				}
			}
			return false
		})
		if err != nil {
			t.Fatalf("turn %d (compact %v, server token %v) never began: %v", i, compact, serverToken, err)
		}
		if byCommand {
			var c struct{ Cancelled bool }
			h.mustCommand(CmdCancel, nil, &c)
			if !c.Cancelled {
				t.Errorf("turn %d: reika.cancel right after begin says nothing was running", i)
			}
		} else if err := h.c.Notify(h.ctx, "window/workDoneProgress/cancel", map[string]any{"token": json.RawMessage(token)}); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("turn %d: %v", i, err)
			}
		case <-h.ctx.Done():
			t.Fatalf("turn %d (compact %v, by command %v, server token %v): the cancel right after begin was lost",
				i, compact, byCommand, serverToken)
		}
		if compact {
			if r := decode[agent.CompactResult](t, res); r.Folded || r.Message != "Cancelled" {
				t.Errorf("turn %d: compact cancelled right after begin = %s", i, res)
			}
		} else if r := decode[agent.AskResult](t, res); r.Status != agent.AskCancelled {
			t.Errorf("turn %d: ask cancelled right after begin = %s", i, res)
		}
		h.c.Wait(h.ctx, func(notes, _ []lsptest.Message) bool { seenNotes = len(notes); return true })
	}
	t.Logf("asks the agent ran: %d of %d", len(h.agent().Asks()), cancelRightAfterBeginRounds/2)
}
