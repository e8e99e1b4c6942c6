package tools

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/reika-lsp/reika-lsp/agent/approval"
)

// Every tool takes any argument text without panicking and without a Go
// error: bad input is a result the model can fix. Commands and fetches are
// denied and paths outside the workspace refused, so the fuzzer only
// touches its own temp workspace.
func FuzzToolArgs(f *testing.F) {
	seeds := []string{
		``, `null`, `{}`, `[]`, `"{\"path\":\"a.txt\"}"`, `{"path":"a.txt"}`, `{"path":"a.txt","start_line":2,"end_line":1}`,
		`{"path":"a.txt","start_line":"x"}`, `{"path":"../x"}`, `{"path":"/etc/passwd"}`, `{"path":"~/x"}`, `{"path":"a.txt\u0000"}`,
		`{"path":"d/new.txt","content":"hi"}`, `{"path":"a.txt","old_string":"one","new_string":"1"}`,
		`{"path":"a.txt","old_string":"","new_string":""}`, `{"path":"a.txt","old_string":"o","new_string":"0","replace_all":"yes"}`,
		`{"command":"echo hi","timeout_s":1e9}`, `{"pattern":"(","path":"."}`, `{"pattern":"o","glob":"{a,{b"}`, `{"pattern":"**/[","path":"d"}`,
		`{"url":"http://example.com/"}`, `{"url":"file:///etc/passwd"}`, `{"task":"look around"}`, `{"path":{"a":1}}`, `{"path":"a.txt","start_line":1.5}`,
	}
	for i, s := range seeds {
		f.Add(uint8(i), s)
	}
	f.Fuzz(func(t *testing.T, which uint8, raw string) {
		root := workspace(t, map[string]string{"a.txt": "one\ntwo\nthree\n", "d/b.go": "package d\n"})
		tmp, _ := filepath.EvalSymlinks(t.TempDir())
		env := &Env{
			Root:    root,
			Files:   DiskFiles{},
			TempDir: tmp,
			Approve: func(_ context.Context, a approval.Request) bool { return a.Kind == "edit" },
			Subagent: func(_ context.Context, task string) (string, error) {
				return "report on " + task, nil
			},
			HTTP: &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
				return nil, errors.New("no network in fuzzing")
			})},
		}
		all := All()
		tool := all[int(which)%len(all)]
		res, err := tool.Run(context.Background(), env, json.RawMessage(raw))
		if err != nil {
			t.Fatalf("%s %q: Go error %v", tool.Spec().Name, raw, err)
		}
		if res.Kind == "" || res.Summary == "" {
			t.Fatalf("%s %q: incomplete result %+v", tool.Spec().Name, raw, res)
		}
		if res.IsError && !strings.HasPrefix(res.Text, "Error: ") {
			t.Fatalf("%s %q: error text %q", tool.Spec().Name, raw, res.Text)
		}
	})
}

func FuzzHTMLToText(f *testing.F) {
	for _, s := range []string{testPage, "<", "</", "<a href='x", "<!--", "<pre>\n<", "<title>x", "<head><title>", "<a href=\"javascript:1\">x</a>", "<ul><li><ol><li>",
		"<a href=#><a href=/x><img alt=a src=data:x>", "<table><tr><td><table><tr><td>x", "a\uFDD0<b\xff>", "<p>a&lt;b</p><code>&gt;</code>"} {
		f.Add(s)
	}
	base, _ := url.Parse("https://example.com/a/b")
	f.Fuzz(func(t *testing.T, s string) {
		title, text, err := htmlToText(s, base)
		if err != nil {
			t.Fatal(err)
		}
		for _, out := range []string{title, text} {
			if !utf8.ValidString(out) || strings.ContainsAny(out, string([]rune{ltSentinel, gtSentinel})) {
				t.Fatalf("output %q of %q", out, s)
			}
		}
		if text != "" && (!strings.HasSuffix(text, "\n") || strings.TrimSpace(text) == "") {
			t.Fatalf("text %q of %q: not empty or lines", text, s)
		}
	})
}

func FuzzGlob(f *testing.F) {
	for _, s := range []string{"**/*.go", "{a,b}", "[!x]", "a\\", "{", "[", "[]]", "**", "a/**/b/**", "{{,}}"} {
		f.Add(s, "a/b.go")
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		g, err := compileGlob(pattern, false)
		if err != nil {
			// What a shell reads literally is literal here too: only an
			// empty pattern or a malformed class is refused.
			if p := strings.TrimPrefix(pattern, "./"); p != "" && !strings.Contains(p, "[") {
				t.Fatalf("%q refused: %v", pattern, err)
			}
			return
		}
		g.match(name)
		// A pattern without special characters matches itself.
		if !strings.ContainsAny(pattern, `*?[]{}\`) && !strings.HasPrefix(pattern, "./") && !g.match(pattern) {
			t.Fatalf("%q does not match itself", pattern)
		}
	})
}

func FuzzDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd")
	f.Add("", "x")
	f.Add("x\ny", "")
	f.Fuzz(func(t *testing.T, a, b string) {
		checkScript(t, splitLines(a), splitLines(b), diffLines(splitLines(a), splitLines(b)))
	})
}

// The edit diff (built around the matches) applies to the file and gives
// the edited file.
func FuzzEditDiff(f *testing.F) {
	f.Add("a\nb\nc\nb\n", "b", "x\ny")
	f.Add("aaa", "a", "")
	f.Add("x\n\n\ny", "\n", "\n\n")
	f.Fuzz(func(t *testing.T, content, old, repl string) {
		if old == "" {
			return
		}
		offsets := findAll(content, old)
		if len(offsets) == 0 {
			return
		}
		updated := applyAt(content, offsets, old, repl)
		diff, _ := unifiedDiff("a/f", "b/f", replaceScript(content, offsets, old, repl))
		if got := applyUnified(t, content, diff); got != updated {
			t.Fatalf("diff gives %q, want %q\n%s", got, updated, diff)
		}
	})
}
