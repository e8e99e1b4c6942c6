package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// searchTree is a workspace whose .gitignore files exclude some files, with
// a binary file and nested directories.
var searchTree = map[string]string{
	".gitignore":              "*.log\nbuild/\n/vendor\n",
	"main.go":                 "package main\n\nfunc main() {\n\tTODO()\n}\n",
	"util.go":                 "package main\n\n// TODO: tidy\nfunc TODO() {}\n",
	"README.md":               "# Project\nTODO list\n",
	"debug.log":               "TODO in a log\n",
	"build/out.go":            "// TODO generated\n",
	"vendor/dep/dep.go":       "// TODO vendored\n",
	"sub/.gitignore":          "secret.txt\n",
	"sub/secret.txt":          "TODO secret\n",
	"sub/notes.txt":           "TODO notes\nnothing\nTODO again\n",
	"sub/trace.log":           "TODO ignored by the root .gitignore\n",
	"sub/deep/x.go":           "package deep // TODO\n",
	"sub/deep/y.ts":           "// TODO ts\n",
	"sub/deep/z.tsx":          "// TODO tsx\n",
	"image.png":               "TODO\x00\x01binary",
	"docs/guide/intro.md":     "TODO intro\n",
	"docs/guide/ref/index.md": "TODO ref\n",
}

func TestGrep(t *testing.T) {
	root := workspace(t, searchTree)
	tests := []struct {
		name    string
		args    string
		text    string
		summary string
		errText string
	}{
		{name: "everything", args: `{"pattern":"TODO"}`,
			text: "README.md:2:TODO list\ndocs/guide/intro.md:1:TODO intro\ndocs/guide/ref/index.md:1:TODO ref\nmain.go:4:\tTODO()\n" +
				"sub/deep/x.go:1:package deep // TODO\nsub/deep/y.ts:1:// TODO ts\nsub/deep/z.tsx:1:// TODO tsx\nsub/notes.txt:1:TODO notes\nsub/notes.txt:3:TODO again\n" +
				"util.go:3:// TODO: tidy\nutil.go:4:func TODO() {}\n",
			summary: `grep "TODO" in .: 11 matches in 9 files`},
		{name: "subdirectory keeps the root's ignores", args: `{"pattern":"TODO","path":"sub"}`,
			text:    "sub/deep/x.go:1:package deep // TODO\nsub/deep/y.ts:1:// TODO ts\nsub/deep/z.tsx:1:// TODO tsx\nsub/notes.txt:1:TODO notes\nsub/notes.txt:3:TODO again\n",
			summary: `grep "TODO" in sub: 5 matches in 4 files`},
		{name: "glob by name at any depth", args: `{"pattern":"TODO","glob":"*.go"}`,
			text: "main.go:4:\tTODO()\nsub/deep/x.go:1:package deep // TODO\nutil.go:3:// TODO: tidy\nutil.go:4:func TODO() {}\n"},
		{name: "glob with braces", args: `{"pattern":"TODO","glob":"*.{ts,tsx}"}`,
			text: "sub/deep/y.ts:1:// TODO ts\nsub/deep/z.tsx:1:// TODO tsx\n"},
		{name: "glob relative to path", args: `{"pattern":"TODO","path":"docs","glob":"guide/*.md"}`,
			text: "docs/guide/intro.md:1:TODO intro\n"},
		{name: "glob with **", args: `{"pattern":"TODO","path":"docs","glob":"**/index.md"}`,
			text: "docs/guide/ref/index.md:1:TODO ref\n"},
		{name: "one file", args: `{"pattern":"TODO","path":"sub/notes.txt"}`,
			text: "sub/notes.txt:1:TODO notes\nsub/notes.txt:3:TODO again\n", summary: `grep "TODO" in sub/notes.txt: 2 matches in 1 file`},
		{name: "an ignored file named explicitly", args: `{"pattern":"TODO","path":"debug.log"}`,
			text: "debug.log:1:TODO in a log\n"},
		{name: "an ignored directory named explicitly", args: `{"pattern":"TODO","path":"build"}`,
			text: "build/out.go:1:// TODO generated\n"},
		{name: "regexp", args: `{"pattern":"(?i)^todo (notes|again)$"}`,
			text: "sub/notes.txt:1:TODO notes\nsub/notes.txt:3:TODO again\n"},
		{name: "no match", args: `{"pattern":"FIXME"}`,
			text: "No matches for \"FIXME\" in the workspace.\n", summary: `grep "FIXME" in .: 0 matches in 0 files`},
		{name: "no match with glob", args: `{"pattern":"TODO","glob":"*.rs"}`,
			text: "No matches for \"TODO\" in the workspace (files matching \"*.rs\").\n"},
		{name: "bad regexp", args: `{"pattern":"a(?=b)"}`, errText: "invalid regular expression \"a(?=b)\": invalid or unsupported Perl syntax"},
		{name: "missing path", args: `{"pattern":"x","path":"nope"}`, errText: "nope does not exist"},
		{name: "empty pattern", args: `{"pattern":""}`, errText: "pattern is empty"},
	}
	env := newEnv(t, root, &approver{decide: deny})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, env, "grep", tt.args)
			if tt.errText != "" {
				if !res.IsError || !strings.Contains(res.Text, tt.errText) {
					t.Fatalf("got %+v, want error %q", res, tt.errText)
				}
				return
			}
			if res.IsError || res.Kind != ctxwin.KindGrep || res.Text != tt.text {
				t.Errorf("got %+v\nwant text %q", res, tt.text)
			}
			if tt.summary != "" && res.Summary != tt.summary {
				t.Errorf("summary %q, want %q", res.Summary, tt.summary)
			}
			if res.Query == "" || res.SavedTo != "" {
				t.Errorf("Query %q SavedTo %q", res.Query, res.SavedTo)
			}
		})
	}
}

func TestGrepBufferAndLongLines(t *testing.T) {
	root := workspace(t, map[string]string{"a.go": "disk\n", "min.js": strings.Repeat("a", 5000) + "NEEDLE" + strings.Repeat("b", 5000) + "\n"})
	env := newEnv(t, root, &approver{})
	env.Files = &fakeFiles{buffers: map[string]string{filepath.Join(root, "a.go"): "NEEDLE in the buffer\n"}}
	res := run(t, env, "grep", `{"pattern":"NEEDLE"}`)
	lines := strings.Split(strings.TrimSuffix(res.Text, "\n"), "\n")
	if len(lines) != 2 || lines[0] != "a.go:1:NEEDLE in the buffer" {
		t.Fatalf("%q", res.Text)
	}
	if !strings.HasPrefix(lines[1], "min.js:1:…") || !strings.Contains(lines[1], "NEEDLE") || !strings.HasSuffix(lines[1], "…") || len(lines[1]) > GrepLineBytes+20 {
		t.Errorf("long line: %q", lines[1])
	}
}

func TestGrepLongResultSaved(t *testing.T) {
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "match %d\n", i)
	}
	root := workspace(t, map[string]string{"big.txt": b.String()})
	env := newEnv(t, root, &approver{})
	res := run(t, env, "grep", `{"pattern":"match"}`)
	if res.SavedTo == "" || res.Summary != `grep "match" in .: 3000 matches in 1 file` {
		t.Fatalf("%+v", res.Summary)
	}
	saved := readFile(t, res.SavedTo)
	if strings.Count(saved, "\n") != 3000 || !strings.HasPrefix(saved, "big.txt:1:match 0\n") || !strings.HasSuffix(saved, "big.txt:3000:match 2999\n") {
		t.Errorf("saved file: %d lines", strings.Count(saved, "\n"))
	}
	if res.Text != saved {
		t.Errorf("a result under the text cap should be whole in Text too")
	}
}

func TestGrepSkipsLargeFiles(t *testing.T) {
	root := workspace(t, map[string]string{"small.txt": "x\n"})
	f, err := os.Create(filepath.Join(root, "huge.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(GrepFileBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	res := run(t, newEnv(t, root, &approver{}), "grep", `{"pattern":"x"}`)
	if res.Text != "small.txt:1:x\n(1 file larger than 8.4 MB not searched)\n" {
		t.Errorf("%q", res.Text)
	}
}

func TestGlob(t *testing.T) {
	root := workspace(t, searchTree)
	tests := []struct {
		name    string
		args    string
		text    string
		summary string
		errText string
	}{
		{name: "all go", args: `{"pattern":"**/*.go"}`, text: "main.go\nsub/deep/x.go\nutil.go\n", summary: `glob "**/*.go": 3 files`},
		{name: "top level only", args: `{"pattern":"*.go"}`, text: "main.go\nutil.go\n"},
		{name: "in a directory", args: `{"pattern":"*","path":"sub"}`, text: "sub/.gitignore\nsub/notes.txt\n", summary: `glob "*" in sub: 2 files`},
		{name: "braces", args: `{"pattern":"**/*.{ts,tsx,md}"}`, text: "README.md\ndocs/guide/intro.md\ndocs/guide/ref/index.md\nsub/deep/y.ts\nsub/deep/z.tsx\n"},
		{name: "middle **", args: `{"pattern":"docs/**/index.md"}`, text: "docs/guide/ref/index.md\n"},
		{name: "trailing **", args: `{"pattern":"sub/**"}`, text: "sub/.gitignore\nsub/deep/x.go\nsub/deep/y.ts\nsub/deep/z.tsx\nsub/notes.txt\n"},
		{name: "class and ?", args: `{"pattern":"[mu]*.g?"}`, text: "main.go\nutil.go\n"},
		{name: "dot slash", args: `{"pattern":"./*.md"}`, text: "README.md\n"},
		{name: "ignored directory by name", args: `{"pattern":"**/*","path":"vendor"}`, text: "vendor/dep/dep.go\n"},
		{name: "no match hint", args: `{"pattern":"*.ts"}`,
			text:    "No files match \"*.ts\" in the workspace. The pattern matches files directly in the workspace only; use \"**/*.ts\" to search every directory below it.\n",
			summary: `glob "*.ts": 0 files`},
		{name: "no match", args: `{"pattern":"**/*.rs"}`, text: "No files match \"**/*.rs\" in the workspace.\n"},
		{name: "absolute", args: `{"pattern":"/etc/*"}`, errText: "is absolute"},
		{name: "missing dir", args: `{"pattern":"*","path":"nope"}`, errText: "nope does not exist"},
		{name: "empty", args: `{"pattern":" "}`, errText: "the pattern is empty"},
	}
	env := newEnv(t, root, &approver{decide: deny})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, env, "glob", tt.args)
			if tt.errText != "" {
				if !res.IsError || !strings.Contains(res.Text, tt.errText) {
					t.Fatalf("got %+v, want error %q", res, tt.errText)
				}
				return
			}
			if res.IsError || res.Kind != ctxwin.KindGlob || res.Text != tt.text {
				t.Errorf("got %+v\nwant text %q", res, tt.text)
			}
			if tt.summary != "" && res.Summary != tt.summary {
				t.Errorf("summary %q, want %q", res.Summary, tt.summary)
			}
		})
	}
}

func TestGlobLongResultSaved(t *testing.T) {
	files := map[string]string{}
	for i := range 700 {
		files[fmt.Sprintf("d%d/f%03d.txt", i%7, i)] = ""
	}
	root := workspace(t, files)
	res := run(t, newEnv(t, root, &approver{}), "glob", `{"pattern":"**/*.txt"}`)
	if res.SavedTo == "" || res.Summary != `glob "**/*.txt": 700 files` || strings.Count(readFile(t, res.SavedTo), "\n") != 700 {
		t.Fatalf("%+v", res.Summary)
	}
	if !strings.HasPrefix(res.Text, "d0/f000.txt\nd0/f007.txt\n") {
		t.Errorf("not sorted: %q", res.Text[:40])
	}
}

func TestGlobPatterns(t *testing.T) {
	tests := []struct {
		pattern  string
		anyDepth bool
		match    []string
		nomatch  []string
	}{
		{"*.go", false, []string{"a.go"}, []string{"d/a.go", "a.go/x", "a.gox"}},
		{"*.go", true, []string{"a.go", "d/e/a.go"}, []string{"a.txt"}},
		{"**/*.go", false, []string{"a.go", "d/a.go", "d/e/a.go"}, []string{"a.txt", "d/a.go.txt"}},
		{"src/**", false, []string{"src/a", "src/d/e"}, []string{"src", "srcx/a", "x/src/a"}},
		{"a/**/b", false, []string{"a/b", "a/x/b", "a/x/y/b"}, []string{"a/xb", "ab"}},
		{"**", false, []string{"a", "a/b/c"}, nil},
		{"x**y", false, []string{"xy", "xay"}, []string{"xa/y"}},
		{"?.txt", false, []string{"a.txt"}, []string{"ab.txt", "/.txt"}},
		{"[ab].txt", false, []string{"a.txt", "b.txt"}, []string{"c.txt"}},
		{"[!ab].txt", false, []string{"c.txt"}, []string{"a.txt", "/.txt"}},
		{"[a-c]x", false, []string{"bx"}, []string{"dx"}},
		{"{a,b{c,d}}.go", false, []string{"a.go", "bc.go", "bd.go"}, []string{"b.go", "e.go"}},
		{"{*.ts,lib/*.js}", false, []string{"x.ts", "lib/y.js"}, []string{"lib/x.ts"}},
		{"a{b", false, []string{"a{b"}, []string{"ab"}},
		{"a[b", false, []string{"a[b"}, []string{"ab"}},
		{`\*.go`, false, []string{"*.go"}, []string{"a.go"}},
		{"a.(b)+", false, []string{"a.(b)+"}, []string{"a.b"}},
		// ** inside an alternative matches zero directories too.
		{"{a/**,b}/c", false, []string{"a/c", "a/x/c", "a/x/y/c", "b/c"}, []string{"c", "ab/c"}},
		// A class member may be escaped; a ] first in a class is a member.
		{`[\]]`, false, []string{"]"}, []string{`\`, `\]`}},
		{"[]]", false, []string{"]"}, []string{"a"}},
		{"[]a]", false, []string{"]", "a"}, []string{"b"}},
		{"[!]]", false, []string{"a"}, []string{"]", "a]"}},
		// A class never matches the path separator.
		{"x[!a]y", false, []string{"xby"}, []string{"x/y", "xay"}},
		{"x[^a-]y", false, []string{"xby"}, []string{"x/y", "x-y"}},
		{"x[!-]y", false, []string{"xby"}, []string{"x/y", "x-y"}},
		// What closes nothing, or is never closed, is literal.
		{"a}", false, []string{"a}"}, []string{"a"}},
		{`a\{b,c}`, false, []string{"a{b,c}"}, []string{"ab", "ac"}},
		{"{a,b", false, []string{"{a,b"}, []string{"a", "b"}},
		{`x\`, false, []string{`x\`}, []string{"x"}},
	}
	for _, tt := range tests {
		g, err := compileGlob(tt.pattern, tt.anyDepth)
		if err != nil {
			t.Errorf("%q: %v", tt.pattern, err)
			continue
		}
		for _, m := range tt.match {
			if !g.match(m) {
				t.Errorf("%q does not match %q", tt.pattern, m)
			}
		}
		for _, m := range tt.nomatch {
			if g.match(m) {
				t.Errorf("%q matches %q", tt.pattern, m)
			}
		}
	}
}

// A list short of the save limits of bash but long enough to be cut to
// fit the window is saved, so that a cut list can be paged.
func TestGlobListOverTheCutLimitSaved(t *testing.T) {
	files := map[string]string{}
	for i := range 60 {
		files[fmt.Sprintf("pkg/file%03d.go", i)] = ""
	}
	root := workspace(t, files)
	res := run(t, newEnv(t, root, &approver{}), "glob", `{"pattern":"**/*.go"}`)
	if len(res.Text) >= SaveBytes || res.SavedTo == "" || readFile(t, res.SavedTo) != res.Text {
		t.Fatalf("%d bytes, saved to %q", len(res.Text), res.SavedTo)
	}
	short := run(t, newEnv(t, root, &approver{}), "glob", `{"pattern":"pkg/file00*.go"}`)
	if short.SavedTo != "" {
		t.Errorf("a list of 10 saved to %s", short.SavedTo)
	}
}

// A name holding a control character is listed quoted, one per line,
// and read takes the quoted name back.
func TestGlobQuotesControlCharacters(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no such names")
	}
	root := workspace(t, map[string]string{"a\nb.txt": "two lines\n", "tab\there.txt": "", "plain.txt": "", `"q.txt`: ""})
	res := run(t, newEnv(t, root, &approver{}), "glob", `{"pattern":"*.txt"}`)
	want := `"\"q.txt"` + "\n" + `"a\nb.txt"` + "\nplain.txt\n" + `"tab\there.txt"` + "\n"
	if res.IsError || res.Text != want {
		t.Errorf("got %q\nwant %q", res.Text, want)
	}
	read := run(t, newEnv(t, root, &approver{}), "read", jsonArgs(t, map[string]any{"path": `"a\nb.txt"`}))
	if read.IsError || !strings.Contains(read.Text, "two lines") {
		t.Errorf("read of the quoted name: %+v", read)
	}
}
