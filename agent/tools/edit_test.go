package tools

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

func TestWrite(t *testing.T) {
	root := workspace(t, map[string]string{"old.txt": "a\nb\nc\n", "dir/keep": ""})
	ap := &approver{}
	env := newEnv(t, root, ap)

	res := run(t, env, "write", `{"path":"new/deep/f.go","content":"package f\n\nfunc F() {}\n"}`)
	if res.IsError || res.Kind != ctxwin.KindWrite || res.Summary != "Wrote new/deep/f.go (3 lines)" || res.Path != "new/deep/f.go" {
		t.Fatalf("new file: %+v", res)
	}
	if got := readFile(t, filepath.Join(root, "new/deep/f.go")); got != "package f\n\nfunc F() {}\n" {
		t.Errorf("content %q", got)
	}
	a := ap.asked[0]
	if a.Tool != "write" || a.Kind != "edit" || a.Summary != "write new/deep/f.go (new file, 3 lines)" ||
		a.Detail != "--- /dev/null\n+++ b/new/deep/f.go\n@@ -0,0 +1,3 @@\n+package f\n+\n+func F() {}\n" {
		t.Errorf("approval %+v", a)
	}

	res = run(t, env, "write", `{"path":"old.txt","content":"a\nB\nc"}`)
	if res.IsError || res.Summary != "Wrote old.txt (3 lines)" {
		t.Fatalf("replace: %+v", res)
	}
	if d := ap.asked[1].Detail; d != "--- a/old.txt\n+++ b/old.txt\n@@ -1,3 +1,3 @@\n a\n-b\n-c\n+B\n+c\n\\ No newline at end of file\n" {
		t.Errorf("replace diff %q", d)
	}

	res = run(t, env, "write", `{"path":"one.txt","content":"one line\n"}`)
	if res.IsError || res.Summary != "Wrote one.txt (1 line)" || ap.asked[2].Summary != "write one.txt (new file, 1 line)" {
		t.Errorf("one line: %+v, approval %+v", res, ap.asked[2])
	}

	res = run(t, env, "write", `{"path":"empty.txt","content":""}`)
	if res.IsError || res.Summary != "Wrote empty.txt (0 lines)" || readFile(t, filepath.Join(root, "empty.txt")) != "" {
		t.Errorf("empty content: %+v", res)
	}
	for _, bad := range []struct{ args, err string }{
		{`{"path":"dir","content":"x"}`, "dir is a directory"},
		{`{"path":".","content":"x"}`, "workspace root"},
		{`{"path":"x.txt"}`, `missing required parameter "content"`},
	} {
		if res := run(t, env, "write", bad.args); !res.IsError || !strings.Contains(res.Text, bad.err) {
			t.Errorf("%s: %+v", bad.args, res)
		}
	}

	ap.decide = deny
	res = run(t, env, "write", `{"path":"old.txt","content":"gone"}`)
	if !res.IsError || !strings.Contains(res.Text, "denied by the user") || readFile(t, filepath.Join(root, "old.txt")) != "a\nB\nc" {
		t.Errorf("denied write: %+v", res)
	}
}

func TestWriteThroughBuffer(t *testing.T) {
	root := workspace(t, map[string]string{"a.go": "disk\n"})
	abs := filepath.Join(root, "a.go")
	files := &fakeFiles{buffers: map[string]string{abs: "buffer\n"}}
	env := newEnv(t, root, &approver{})
	env.Files = files
	res := run(t, env, "edit", `{"path":"a.go","old_string":"buffer","new_string":"edited"}`)
	if res.IsError || files.buffers[abs] != "edited\n" || readFile(t, abs) != "disk\n" || !slices.Equal(files.writes, []string{abs}) {
		t.Errorf("edit through the buffer: %+v, buffer %q", res, files.buffers[abs])
	}
}

func TestEdit(t *testing.T) {
	src := "package a\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B() int {\n\treturn 1\n}\n"
	tests := []struct {
		name     string
		file     string
		args     string
		want     string // the file afterwards
		diff     string // exact Text, when set
		summary  string
		errText  string
		noAsking bool // an error found before asking
	}{
		{name: "unique", file: src, args: `{"path":"a.go","old_string":"func A() int {\n\treturn 1","new_string":"func A() int {\n\treturn 2"}`,
			want:    strings.Replace(src, "return 1", "return 2", 1),
			diff:    "--- a/a.go\n+++ b/a.go\n@@ -1,7 +1,7 @@\n package a\n \n func A() int {\n-\treturn 1\n+\treturn 2\n }\n \n func B() int {\n",
			summary: "Edited a.go (1 hunk)"},
		{name: "not unique", file: src, args: `{"path":"a.go","old_string":"return 1","new_string":"return 2"}`,
			errText: "old_string occurs 2 times in a.go (at lines 4, 8)", noAsking: true},
		{name: "replace all", file: src, args: `{"path":"a.go","old_string":"return 1","new_string":"return 2","replace_all":true}`,
			want: strings.ReplaceAll(src, "return 1", "return 2"), summary: "Edited a.go (1 hunk)"},
		{name: "not found", file: src, args: `{"path":"a.go","old_string":"return 3","new_string":"x"}`,
			errText: "old_string was not found in a.go; read the file again", noAsking: true},
		{name: "indentation differs", file: src, args: `{"path":"a.go","old_string":"func B() int {\n    return 1\n}","new_string":"x"}`,
			errText: "its first line appears at line 7, but the rest differs", noAsking: true},
		{name: "line numbers copied", file: src, args: `{"path":"a.go","old_string":"3→func A() int {\n4→\treturn 1","new_string":"x"}`,
			errText: "line numbers that read shows", noAsking: true},
		{name: "crlf file", file: "one\r\ntwo\r\nthree\r\n", args: `{"path":"a.go","old_string":"two\nthree","new_string":"2\n3"}`,
			want: "one\r\n2\r\n3\r\n", summary: "Edited a.go (1 hunk)"},
		{name: "same strings", file: src, args: `{"path":"a.go","old_string":"x","new_string":"x"}`, errText: "the same", noAsking: true},
		{name: "empty old", file: src, args: `{"path":"a.go","old_string":"","new_string":"x"}`, errText: "use write", noAsking: true},
		{name: "missing file", args: `{"path":"nope.go","old_string":"a","new_string":"b"}`, errText: "nope.go does not exist; to create it, use write", noAsking: true},
		{name: "binary", file: "ab\x00cd", args: `{"path":"a.go","old_string":"ab","new_string":"x"}`, errText: "binary", noAsking: true},
		{name: "delete lines", file: "a\nb\nc\n", args: `{"path":"a.go","old_string":"b\n","new_string":""}`,
			want: "a\nc\n", diff: "--- a/a.go\n+++ b/a.go\n@@ -1,3 +1,2 @@\n a\n-b\n c\n"},
		{name: "insert at end without newline", file: "a\nb", args: `{"path":"a.go","old_string":"b","new_string":"b\nc"}`,
			want: "a\nb\nc", diff: "--- a/a.go\n+++ b/a.go\n@@ -1,2 +1,3 @@\n a\n-b\n\\ No newline at end of file\n+b\n+c\n\\ No newline at end of file\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{}
			if tt.file != "" {
				files["a.go"] = tt.file
			}
			root := workspace(t, files)
			ap := &approver{}
			res := run(t, newEnv(t, root, ap), "edit", tt.args)
			if tt.errText != "" {
				if !res.IsError || !strings.Contains(res.Text, tt.errText) {
					t.Fatalf("got %+v, want error %q", res, tt.errText)
				}
				if tt.noAsking && len(ap.asked) > 0 {
					t.Errorf("asked %v before failing", ap.kinds())
				}
				if tt.file != "" && readFile(t, filepath.Join(root, "a.go")) != tt.file {
					t.Error("the file changed")
				}
				return
			}
			if res.IsError || res.Kind != ctxwin.KindEdit || res.Path != "a.go" {
				t.Fatalf("got %+v", res)
			}
			if got := readFile(t, filepath.Join(root, "a.go")); got != tt.want {
				t.Errorf("file %q, want %q", got, tt.want)
			}
			if tt.diff != "" && res.Text != tt.diff {
				t.Errorf("diff\n%s\nwant\n%s", res.Text, tt.diff)
			}
			if tt.summary != "" && res.Summary != tt.summary {
				t.Errorf("summary %q, want %q", res.Summary, tt.summary)
			}
			if got := applyUnified(t, tt.file, res.Text); got != tt.want {
				t.Errorf("the diff does not turn the file into the result: %q", got)
			}
			if len(ap.asked) != 1 || ap.asked[0].Kind != "edit" || ap.asked[0].Detail != res.Text || ap.asked[0].Summary != "edit a.go ("+plural(strings.Count(res.Text, "\n@@ ")+btoi(strings.HasPrefix(res.Text, "@@")), "hunk")+")" {
				t.Errorf("approval %+v", ap.asked)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestEditHunks(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	b.WriteString("target\n")
	for i := 41; i <= 80; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	b.WriteString("target\n")
	src := "target\n" + b.String()
	root := workspace(t, map[string]string{"f.txt": src})
	ap := &approver{}
	res := run(t, newEnv(t, root, ap), "edit", `{"path":"f.txt","old_string":"target\n","new_string":"TARGET\nadded\n","replace_all":true}`)
	if res.IsError || res.Summary != "Edited f.txt (3 hunks)" {
		t.Fatalf("%+v", res)
	}
	headers := regexp.MustCompile(`(?m)^@@ .* @@$`).FindAllString(res.Text, -1)
	want := []string{"@@ -1,4 +1,5 @@", "@@ -39,7 +40,8 @@", "@@ -80,4 +82,5 @@"}
	if !slices.Equal(headers, want) {
		t.Errorf("hunks %q, want %q\n%s", headers, want, res.Text)
	}
	if got := applyUnified(t, src, res.Text); got != readFile(t, filepath.Join(root, "f.txt")) {
		t.Error("the diff does not reproduce the file")
	}
}

func TestEditDenied(t *testing.T) {
	root := workspace(t, map[string]string{"a.txt": "x\n"})
	res := run(t, newEnv(t, root, &approver{decide: deny}), "edit", `{"path":"a.txt","old_string":"x","new_string":"y"}`)
	if !res.IsError || res.Text != "Error: edit a.txt (1 hunk): denied by the user" || readFile(t, filepath.Join(root, "a.txt")) != "x\n" {
		t.Errorf("%+v", res)
	}
}

// diffLines is a correct edit script on random inputs: the kept and
// removed lines give a, the kept and added lines give b; and the unified
// diff of it applies.
func TestDiffLinesRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		a := randomLines(r, r.IntN(30))
		b := mutate(r, a)
		checkScript(t, a, b, diffLines(a, b))
		if i%50 == 0 {
			big := randomLines(r, 3000)
			big2 := mutate(r, big)
			checkScript(t, big, big2, diffLines(big, big2))
		}
	}
	// Beyond maxMyersD edits the middle is replaced whole, still correctly.
	a, b := make([]string, 1500), make([]string, 1500)
	for i := range a {
		a[i], b[i] = fmt.Sprintf("a%d\n", i), fmt.Sprintf("b%d\n", i)
	}
	checkScript(t, a, b, diffLines(a, b))
}

func checkScript(t *testing.T, a, b []string, ops []diffOp) {
	t.Helper()
	var gotA, gotB []string
	for _, op := range ops {
		if op.kind != '+' {
			gotA = append(gotA, op.line)
		}
		if op.kind != '-' {
			gotB = append(gotB, op.line)
		}
	}
	if !slices.Equal(gotA, a) || !slices.Equal(gotB, b) {
		t.Fatalf("bad script for %q → %q: %v", a, b, ops)
	}
	diff, _ := unifiedDiff("a/x", "b/x", ops)
	if got := applyUnified(t, strings.Join(a, ""), diff); got != strings.Join(b, "") {
		t.Fatalf("diff does not apply:\n%s", diff)
	}
}

func randomLines(r *rand.Rand, n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = strconv.Itoa(r.IntN(8)) + "\n"
	}
	if n > 0 && r.IntN(3) == 0 {
		lines[n-1] = strings.TrimSuffix(lines[n-1], "\n")
	}
	return lines
}

func mutate(r *rand.Rand, a []string) []string {
	b := slices.Clone(a)
	for range r.IntN(6) {
		switch i := r.IntN(len(b) + 1); r.IntN(3) {
		case 0:
			b = slices.Insert(b, i, "new"+strconv.Itoa(r.IntN(5))+"\n")
		case 1:
			if i < len(b) {
				b = slices.Delete(b, i, i+1)
			}
		default:
			if i < len(b) {
				b[i] = "changed\n"
			}
		}
	}
	// Only the last line may lack a newline.
	for i := 0; i < len(b)-1; i++ {
		if !strings.HasSuffix(b[i], "\n") {
			b[i] += "\n"
		}
	}
	return b
}

// applyUnified applies a unified diff to old, checking every context and
// removed line, as patch would.
func applyUnified(t *testing.T, old, diff string) string {
	t.Helper()
	if diff == "" {
		return old
	}
	src := splitLines(old)
	var out []string
	at := 0 // next line of src to copy
	lines := strings.SplitAfter(diff, "\n")
	header := regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@\n$`)
	if !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		t.Fatalf("no file headers:\n%s", diff)
	}
	for i := 2; i < len(lines) && lines[i] != ""; {
		m := header.FindStringSubmatch(lines[i])
		if m == nil {
			t.Fatalf("bad hunk header %q in\n%s", lines[i], diff)
		}
		start, _ := strconv.Atoi(m[1])
		count := 1
		if m[2] != "" {
			count, _ = strconv.Atoi(m[2])
		}
		if count == 0 {
			start++ // an empty range names the line before
		}
		for at < start-1 {
			out = append(out, src[at])
			at++
		}
		i++
		for i < len(lines) && lines[i] != "" && !strings.HasPrefix(lines[i], "@@") {
			l := lines[i]
			body := l[1:]
			if i+1 < len(lines) && lines[i+1] == "\\ No newline at end of file\n" {
				body = strings.TrimSuffix(body, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if at >= len(src) || src[at] != body {
					t.Fatalf("hunk line %q does not match the file (line %d)\n%s", l, at+1, diff)
				}
				if l[0] == ' ' {
					out = append(out, body)
				}
				at++
			case '+':
				out = append(out, body)
			default:
				t.Fatalf("bad diff line %q", l)
			}
			i++
		}
	}
	out = append(out, src[at:]...)
	return strings.Join(out, "")
}
