package tools

import (
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/approval"
)

// TestLongCommandRefusedWhenItWouldAsk refuses, without asking, a command
// too long to show whole, and runs it when no one is asked.
func TestLongCommandRefusedWhenItWouldAsk(t *testing.T) {
	root := workspace(t, nil)
	long := "echo " + strings.Repeat("a", approval.TextBytes)
	ap := &approver{}
	env := newEnv(t, root, ap)
	res := run(t, env, "bash", jsonArgs(t, map[string]any{"command": long}))
	if !res.IsError || !strings.Contains(res.Text, "longer than the 4000 an approval can show whole") || len(ap.asked) != 0 {
		t.Errorf("%+v, asked %d", res, len(ap.asked))
	}
	env.WouldAsk = func(string) bool { return false }
	if res := run(t, env, "bash", jsonArgs(t, map[string]any{"command": long})); res.IsError {
		t.Errorf("allowed without asking: %+v", res)
	}
	env.WouldAsk = nil
	short := "echo " + strings.Repeat("b", approval.TextBytes-5)
	ap.asked = nil
	if res := run(t, env, "bash", jsonArgs(t, map[string]any{"command": short})); res.IsError || len(ap.asked) != 1 || ap.asked[0].Detail != short {
		t.Errorf("a command that fits: %+v, asked %+v", res, ap.asked)
	}
}
