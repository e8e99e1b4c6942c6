package tools

import (
	"strings"
	"testing"
)

// TestLongCommandRefusedWhenItWouldAsk refuses, without asking, a command
// too long to show whole, and runs it when no one is asked.
func TestLongCommandRefusedWhenItWouldAsk(t *testing.T) {
	root := workspace(t, nil)
	long := "echo " + strings.Repeat("a", ApprovalTextBytes)
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
	short := "echo " + strings.Repeat("b", ApprovalTextBytes-5)
	ap.asked = nil
	if res := run(t, env, "bash", jsonArgs(t, map[string]any{"command": short})); res.IsError || len(ap.asked) != 1 || ap.asked[0].Detail != short {
		t.Errorf("a command that fits: %+v, asked %+v", res, ap.asked)
	}
}

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"ls -la\n\tdone":           "ls -la\n\tdone",
		"echo hi\rrm -rf ~":        `echo hi\x0drm -rf ~`,
		"\x1b[8mhidden\x1b[0m":     `\x1b[8mhidden\x1b[0m`,
		"safe \u202eevil\u202c":    "safe <U+202E>evil<U+202C>",
		"zero\u200bwidth\ufeff":    "zero<U+200B>width<U+FEFF>",
		"bad \xff byte":            `bad \xff byte`,
		"caf\u00e9 \u65e5\u672c 🙂": "caf\u00e9 \u65e5\u672c 🙂",
		"c1 \u009b31m":             "c1 <U+009B>31m",
	} {
		if got := Visible(in); got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
	}
}
