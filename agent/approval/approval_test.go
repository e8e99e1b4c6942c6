package approval

import "testing"

// TestVisible shows control, invisible and direction-changing characters
// as escapes and keeps the rest.
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
