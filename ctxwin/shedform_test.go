package ctxwin

import (
	"encoding/json"
	"strings"
	"testing"
)

// Table tests of what a shed result keeps (shed.go): its first line in
// place and the entry its shape gets, and the long arguments of a shed
// call cut short inside their strings.

func TestShedEntryByShape(t *testing.T) {
	outliner := func(r *Result, budget int) string { return "L1-9 func Parse()\nL10-20 func lex()" }
	long := lines(40, "out")
	diff := "--- a/x.go\n+++ b/x.go\n@@ -1,3 +1,4 @@\n" + lines(40, "+ code")
	tests := []struct {
		name  string
		r     Result
		ok    bool
		entry []string // what the entry says, in order
		not   []string
	}{
		{"a tiny result keeps its bytes", Result{Kind: KindBash, Text: "ok\n"}, false, nil, nil},
		{"a read keeps its outline", Result{Kind: KindRead, Text: lines(40, "src/a.go"), Summary: "Read src/a.go lines 1-40 of 40", Path: "src/a.go"}, true,
			[]string{"- round 7: `src/a.go line 1 of the file with some code in it` (Read src/a.go lines 1-40 of 40)", "\n  outline:\n  L1-9 func Parse()\n  L10-20 func lex()"}, nil},
		{"a diff keeps its headers", Result{Kind: KindEdit, Text: diff, Summary: "Edited x.go (1 hunk)"}, true,
			[]string{"(Edited x.go (1 hunk))", "\n  --- a/x.go\n  +++ b/x.go\n  @@ -1,3 +1,4 @@"}, []string{"+ code line 2"}},
		{"a report keeps its opening", Result{Kind: KindSubagent, Text: lines(40, "report")}, true,
			[]string{"report line 1 of", "report line 7 of the file", "…"}, []string{"report line 40 "}},
		{"a command keeps its last line", Result{Kind: KindBash, Text: long + "(exit status 1)\n", Summary: "bash `make`: exit 1"}, true,
			[]string{"(bash `make`: exit 1)", "last line: `out line 40 of the file with some code in it`"}, []string{"exit status"}},
		{"a long output says where it was saved", Result{Kind: KindGrep, Text: long, Summary: `grep "x": 40 matches`, SavedTo: "/tmp/g.txt"}, true,
			[]string{"whole output: /tmp/g.txt"}, nil},
		{"a summary the line already says is left out", Result{Kind: KindGrep, Text: long, Summary: "out line 1 of the file with some code in it"}, true,
			nil, []string{"it` ("}},
		{"a summary that does not hold the line goes along", Result{Kind: KindGrep, Text: long, Summary: "1"}, true,
			[]string{"it` (1)"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.r
			head, entry, ok := shedEntry(7, &r, outliner, 1000)
			if ok != tt.ok {
				t.Fatalf("shed: %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if head != firstLine(r.Text)+"\n" || !strings.HasPrefix(r.Text, head) {
				t.Errorf("keeps %q in place, not its first line", head)
			}
			at := 0
			for _, w := range tt.entry {
				i := strings.Index(entry[at:], w)
				if i < 0 {
					t.Fatalf("the entry lacks %q after byte %d:\n%s", w, at, entry)
				}
				at += i + len(w)
			}
			for _, n := range tt.not {
				if strings.Contains(entry, n) {
					t.Errorf("the entry has %q:\n%s", n, entry)
				}
			}
			if (len(head)+len(entry))*2 > len(r.Shown()) {
				t.Errorf("the shed keeps %d of %d bytes: not worth it", len(head)+len(entry), len(r.Shown()))
			}
		})
	}
}

func TestShedShapeHelpers(t *testing.T) {
	diffs := []struct {
		text string
		want bool
	}{
		{"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", true},
		{"diff --git a/x b/x\nindex 1..2\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n", true},
		{"ok\n--- a/x\n@@ -1 +1 @@\n", true},
		{"--- a/x\n+++ b/x\n", false}, // no hunk
		{"@@ -1 +1 @@\n", false},      // no file
		{"just text\n", false},
	}
	for _, tt := range diffs {
		if got := isDiff(tt.text); got != tt.want {
			t.Errorf("isDiff(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
	lasts := []struct{ text, want string }{
		{"one\ntwo\nthree\n", "three"},
		{"one\ntwo\n(exit status 1)\n(took 2s)\n", "two"},
		{"only\n", ""},
		{"a\n  " + strings.Repeat("x", 300) + "\n", strings.Repeat("x", 200) + "…"},
	}
	for _, tt := range lasts {
		if got := lastOutputLine(tt.text); got != tt.want {
			t.Errorf("lastOutputLine(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
	diff := "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n@@ -9 +9 @@\n-c\n+d\n"
	if got, want := diffHeaders(diff, 1000), "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n@@ -9 +9 @@"; got != want {
		t.Errorf("diffHeaders = %q, want %q", got, want)
	}
	if got, want := diffHeaders(diff, 30), "diff --git a/x b/x\n--- a/x…"; got != want {
		t.Errorf("diffHeaders within 30 bytes = %q, want %q", got, want)
	}
	if got := opening("short", 10); got != "short" {
		t.Errorf("opening of a short text: %q", got)
	}
	if got, want := opening("line one\nline two\nline three", 20), "line one\nline two…"; got != want {
		t.Errorf("opening cut at a line end = %q, want %q", got, want)
	}
	if got, want := opening("abcdefghijklmnopqrstuvwxyz", 10), "abcdefghij…"; got != want {
		t.Errorf("opening with no line end = %q, want %q", got, want)
	}
}

// TestCutArguments: a long string argument of a shed call keeps its start
// and its end, cut inside the string, and the JSON stays valid; short or
// malformed arguments stay as they are.
func TestCutArguments(t *testing.T) {
	long := strings.Repeat("word ", 300)
	escaped := strings.Repeat(`a\"b\\c\u00e9`, 120) // no space to cut before: only escapeSafe keeps the escapes whole
	tests := []struct {
		name string
		args string
		cut  bool
	}{
		{"short", `{"path":"a.go"}`, false},
		{"long content", `{"path":"a.go","content":"` + long + `"}`, true},
		{"escapes kept whole", `{"content":"` + escaped + `"}`, true},
		{"two long strings", `{"old":"` + long + `","new":"` + long + `"}`, true},
		{"long but no long string", `{"a":"` + strings.Repeat("x", 100) + `","b":"` + strings.Repeat("y", 100) + `","c":"` + strings.Repeat("z", 100) + `","d":"` + strings.Repeat("w", 300) + `"}`, false},
		{"not JSON", `{"content":"` + long, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := []ToolCall{{ID: "a", Name: "write", Arguments: tt.args}}
			out := cutArguments(calls)
			if !tt.cut {
				if out != nil {
					t.Fatalf("cut %q", out[0].Arguments)
				}
				return
			}
			if out == nil {
				t.Fatal("not cut")
			}
			got := out[0].Arguments
			if calls[0].Arguments != tt.args {
				t.Error("the original call was changed")
			}
			if len(got) >= len(tt.args) || !json.Valid([]byte(got)) {
				t.Fatalf("cut to %d bytes from %d, valid JSON %v: %s", len(got), len(tt.args), json.Valid([]byte(got)), got)
			}
			var before, after map[string]string
			json.Unmarshal([]byte(tt.args), &before)
			json.Unmarshal([]byte(got), &after)
			for k, v := range before {
				w := after[k]
				if len(v) > bigArgument && (len(w) > argumentHead+argumentTail+2 || !strings.HasPrefix(v, w[:argumentHead/2]) || !strings.HasSuffix(v, w[len(w)-argumentTail/2:])) {
					t.Errorf("%s keeps %q: not its start and end", k, w)
				}
				if len(v) <= bigArgument && w != v {
					t.Errorf("%s was changed: %q", k, w)
				}
			}
		})
	}
}

// TestCutArgumentsKeepsEscapesWhole: wherever the cut falls in a string of
// escapes, it never splits one, so the arguments stay valid JSON.
func TestCutArgumentsKeepsEscapesWhole(t *testing.T) {
	escaped := strings.Repeat(`a\"b\\c\u00e9`, 120) // no space to cut before
	for pad := 0; pad < 13; pad++ {
		for tail := 0; tail < 13; tail++ {
			args := `{"content":"` + strings.Repeat("x", pad) + escaped + strings.Repeat("y", tail) + `"}`
			out := cutArguments([]ToolCall{{Arguments: args}})
			if out == nil || !json.Valid([]byte(out[0].Arguments)) {
				t.Fatalf("pad %d, tail %d: cut to invalid JSON: %v", pad, tail, out)
			}
		}
	}
}
