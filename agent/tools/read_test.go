package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

func TestRead(t *testing.T) {
	long := strings.Repeat("x", ReadLineBytes+500)
	var many strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&many, "line %d\n", i)
	}
	root := workspace(t, map[string]string{
		"a.txt":      "one\ntwo\nthree\nfour\nfive\n",
		"noeol.txt":  "alpha\nbeta",
		"crlf.txt":   "a\r\nb\r\n",
		"empty.txt":  "",
		"long.txt":   "short\n" + long + "\nend\n",
		"many.txt":   many.String(),
		"bin.dat":    "abc\x00def",
		"dir/x.txt":  "x\n",
		"utf8.txt":   strings.Repeat("é", ReadLineBytes) + "\n",
		"twelve.txt": strings.Repeat("l\n", 12),
	})
	tests := []struct {
		name    string
		args    string
		text    string // exact Text, when set
		summary string
		lines   [3]int // start, end, total
		errText string
	}{
		{name: "whole", args: `{"path":"a.txt"}`,
			text:    "a.txt lines 1-5 of 5\n1→one\n2→two\n3→three\n4→four\n5→five\n",
			summary: "Read a.txt lines 1-5 of 5", lines: [3]int{1, 5, 5}},
		{name: "range", args: `{"path":"a.txt","start_line":2,"end_line":3}`,
			text:    "a.txt lines 2-3 of 5\n2→two\n3→three\n(2 more lines; continue with start_line 4)\n",
			summary: "Read a.txt lines 2-3 of 5", lines: [3]int{2, 3, 5}},
		{name: "from", args: `{"path":"a.txt","start_line":4}`,
			text: "a.txt lines 4-5 of 5\n4→four\n5→five\n", summary: "Read a.txt lines 4-5 of 5", lines: [3]int{4, 5, 5}},
		{name: "end past the end", args: `{"path":"a.txt","start_line":5,"end_line":99}`,
			text: "a.txt lines 5-5 of 5\n5→five\n", lines: [3]int{5, 5, 5}},
		{name: "zero start", args: `{"path":"a.txt","start_line":0,"end_line":1}`,
			summary: "Read a.txt lines 1-1 of 5", lines: [3]int{1, 1, 5}},
		{name: "no final newline", args: `{"path":"noeol.txt"}`,
			text: "noeol.txt lines 1-2 of 2\n1→alpha\n2→beta\n", lines: [3]int{1, 2, 2}},
		{name: "crlf", args: `{"path":"crlf.txt"}`,
			text: "crlf.txt lines 1-2 of 2\n1→a\n2→b\n", lines: [3]int{1, 2, 2}},
		{name: "empty", args: `{"path":"empty.txt"}`,
			text: "empty.txt lines 0-0 of 0\n(empty file)\n", summary: "Read empty.txt lines 0-0 of 0"},
		{name: "width", args: `{"path":"twelve.txt","start_line":8}`,
			text: "twelve.txt lines 8-12 of 12\n 8→l\n 9→l\n10→l\n11→l\n12→l\n", lines: [3]int{8, 12, 12}},
		{name: "default limit", args: `{"path":"many.txt"}`,
			summary: "Read many.txt lines 1-2000 of 2500", lines: [3]int{1, 2000, 2500}},
		{name: "second page", args: `{"path":"many.txt","start_line":2001}`,
			summary: "Read many.txt lines 2001-2500 of 2500", lines: [3]int{2001, 2500, 2500}},
		{name: "explicit long range", args: `{"path":"many.txt","start_line":1,"end_line":2500}`,
			summary: "Read many.txt lines 1-2500 of 2500", lines: [3]int{1, 2500, 2500}},
		{name: "past the end", args: `{"path":"a.txt","start_line":6}`, errText: "start_line 6 is past the end of a.txt, which has 5 lines"},
		{name: "end before start", args: `{"path":"a.txt","start_line":3,"end_line":2}`, errText: "end_line 2 is before start_line 3"},
		{name: "negative", args: `{"path":"a.txt","start_line":-1}`, errText: "start_line must be 1 or more"},
		{name: "missing", args: `{"path":"nope.txt"}`, errText: "nope.txt does not exist"},
		{name: "binary", args: `{"path":"bin.dat"}`, errText: "bin.dat is a binary file (7 B)"},
		{name: "directory", args: `{"path":"dir"}`, errText: "dir is a directory"},
		{name: "no path", args: `{"start_line":1}`, errText: `missing required parameter "path"`},
	}
	env := newEnv(t, root, &approver{decide: deny})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, env, "read", tt.args)
			if tt.errText != "" {
				if !res.IsError || !strings.Contains(res.Text, tt.errText) {
					t.Fatalf("got %+v, want error %q", res, tt.errText)
				}
				return
			}
			if res.IsError || res.Kind != ctxwin.KindRead {
				t.Fatalf("got %+v", res)
			}
			if tt.text != "" && res.Text != tt.text {
				t.Errorf("text\n%q\nwant\n%q", res.Text, tt.text)
			}
			if tt.summary != "" && res.Summary != tt.summary {
				t.Errorf("summary %q, want %q", res.Summary, tt.summary)
			}
			if got := [3]int{res.StartLine, res.EndLine, res.TotalLines}; got != tt.lines {
				t.Errorf("lines %v, want %v", got, tt.lines)
			}
			if !strings.HasPrefix(res.Text, fmt.Sprintf("%s lines %d-%d of %d\n", res.Path, res.StartLine, res.EndLine, res.TotalLines)) {
				t.Errorf("header does not match the fields: %q", firstLine(res.Text, 100))
			}
			if res.Summary != fmt.Sprintf("Read %s lines %d-%d of %d", res.Path, res.StartLine, res.EndLine, res.TotalLines) {
				t.Errorf("summary %q does not match the fields", res.Summary)
			}
			want, _ := os.ReadFile(filepath.Join(root, res.Path))
			if string(res.Source) != string(want) {
				t.Errorf("File is not the whole file")
			}
		})
	}

	res := run(t, env, "read", `{"path":"many.txt"}`)
	wantContains(t, "default limit", res.Text, "2000→line 2000\n(500 more lines; continue with start_line 2001)\n")
	res = run(t, env, "read", `{"path":"long.txt"}`)
	wantContains(t, "long line", res.Text, "1→short\n2→xxx", fmt.Sprintf("… [line cut: %d bytes]\n3→end\n", ReadLineBytes+500))
	res = run(t, env, "read", `{"path":"utf8.txt"}`)
	if !strings.Contains(res.Text, "… [line cut") || !isValidUTF8(res.Text) {
		t.Errorf("a cut multibyte line: %q", res.Text[len(res.Text)-60:])
	}
}

func isValidUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// Open editor buffers win over the disk, including buffers of files not
// saved yet.
func TestReadOpenBuffer(t *testing.T) {
	root := workspace(t, map[string]string{"a.go": "package disk\n"})
	files := &fakeFiles{buffers: map[string]string{
		filepath.Join(root, "a.go"):     "package buffer\n\nfunc F() {}\n",
		filepath.Join(root, "new.go"):   "package unsaved\n",
		filepath.Join(root, "dir/n.go"): "package n\n",
	}}
	env := newEnv(t, root, &approver{})
	env.Files = files
	res := run(t, env, "read", `{"path":"a.go"}`)
	if res.Text != "a.go lines 1-3 of 3\n1→package buffer\n2→\n3→func F() {}\n" || string(res.Source) != "package buffer\n\nfunc F() {}\n" {
		t.Errorf("buffer: %+v", res)
	}
	res = run(t, env, "read", `{"path":"new.go"}`)
	if res.IsError || !strings.Contains(res.Text, "package unsaved") {
		t.Errorf("unsaved buffer: %+v", res)
	}
}

// Reads of large files and of saved outputs stream from disk: the range
// comes back right, and the whole file is not held (File is nil).
func TestReadStreams(t *testing.T) {
	root := workspace(t, nil)
	env := newEnv(t, root, &approver{})
	saved := filepath.Join(env.TempDir, "bash-1.txt")
	var b strings.Builder
	for i := 1; i <= 50000; i++ {
		fmt.Fprintf(&b, "row %d\n", i)
	}
	writeFile(t, saved, b.String())
	res := run(t, env, "read", fmt.Sprintf(`{"path":%q,"start_line":40000,"end_line":40002}`, saved))
	want := fmt.Sprintf("%s lines 40000-40002 of 50000\n40000→row 40000\n40001→row 40001\n40002→row 40002\n", saved)
	if !strings.HasPrefix(res.Text, want) || res.Source != nil || res.TotalLines != 50000 {
		t.Errorf("got %q (Source %d bytes)", firstLine(res.Text, 200), len(res.Source))
	}
	if res.Path != saved {
		t.Errorf("Path %q, want the absolute temp path", res.Path)
	}
}

// A read stops before its text passes ReadBytes, and says where to go on.
func TestReadByteCap(t *testing.T) {
	line := strings.Repeat("y", 1000)
	root := workspace(t, map[string]string{"wide.txt": strings.Repeat(line+"\n", 1000)})
	res := run(t, newEnv(t, root, &approver{}), "read", `{"path":"wide.txt","end_line":1000}`)
	if len(res.Text) > ReadBytes+200 || res.EndLine >= 1000 || res.EndLine < 200 {
		t.Fatalf("%d bytes, lines %d-%d", len(res.Text), res.StartLine, res.EndLine)
	}
	wantContains(t, "byte cap", res.Text, fmt.Sprintf("continue with start_line %d", res.EndLine+1))
}
