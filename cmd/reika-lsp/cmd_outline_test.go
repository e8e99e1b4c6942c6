package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/outline"
)

func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = dispatch(args, &out, &errb)
	return out.String(), errb.String(), code
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const serverGo = "package a\n\nimport \"net\"\n\ntype Server struct {\n\tAddr string\n}\n\nfunc (s *Server) Serve(l net.Listener) error {\n\treturn nil\n}\n"

func TestOutlineCommand(t *testing.T) {
	if _, err := outline.Parse("a.go", []byte(serverGo)); err != nil {
		t.Skipf("no outlines in this build: %v", err)
	}
	dir := writeFiles(t, map[string]string{"a.go": serverGo, "notes.xyz": "x", "blob.go": "package a\x00\x01"})
	a, blob, notes, missing := filepath.Join(dir, "a.go"), filepath.Join(dir, "blob.go"), filepath.Join(dir, "notes.xyz"), filepath.Join(dir, "missing.go")

	out, errs, code := run(t, "outline", a)
	want := "== " + a + " (go, 11 lines)\nL3 imports: net\nL5-7 type Server struct\n  L6 Addr string\nL9-11 func (s *Server) Serve(l net.Listener) error\n"
	if code != 0 || out != want || errs != "" {
		t.Errorf("outline a.go: code %d\n%s\nwant\n%s\nstderr %q", code, out, want, errs)
	}

	// A missing and a binary file: a message each, exit 1, the others still printed.
	out, errs, code = run(t, "outline", missing, a, blob, notes)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(errs, "missing.go") || !strings.Contains(errs, "no such file") || !strings.Contains(errs, "blob.go: binary file") {
		t.Errorf("stderr lacks the reasons:\n%s", errs)
	}
	if !strings.Contains(out, "func (s *Server) Serve") || !strings.Contains(out, "notes.xyz\n(no outline for this file type)") {
		t.Errorf("stdout:\n%s", out)
	}

	// Unknown file types are not an error.
	if _, _, code := run(t, "outline", notes); code != 0 {
		t.Errorf("unknown file type: exit %d, want 0", code)
	}
	// Flags after the files; a budget.
	out, _, _ = run(t, "outline", a, "--budget", "60")
	if !strings.Contains(out, "entries left out") {
		t.Errorf("--budget 60:\n%s", out)
	}
	for _, args := range [][]string{{"outline"}, {"outline", "--budget", "x", a}, {"outline", "--nope", a}} {
		if _, _, code := run(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

func TestOutlineJSON(t *testing.T) {
	if _, err := outline.Parse("a.go", []byte(serverGo)); err != nil {
		t.Skipf("no outlines in this build: %v", err)
	}
	dir := writeFiles(t, map[string]string{"a.go": serverGo, "notes.xyz": "x"})
	out, _, code := run(t, "outline", "--json", filepath.Join(dir, "a.go"), filepath.Join(dir, "missing.go"), filepath.Join(dir, "notes.xyz"))
	if code != 1 {
		t.Errorf("exit %d, want 1 (a file is missing)", code)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 || lines[1] != "null" || lines[2] != "[]" {
		t.Fatalf("want one line per file (array, null, []):\n%s", out)
	}
	var entries []map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 {
		t.Fatalf("%d entries: %s", len(entries), lines[0])
	}
	typ := entries[1]
	for _, k := range []string{"name", "kind", "line", "endLine", "signature", "children"} {
		if _, ok := typ[k]; !ok {
			t.Errorf("entry lacks %q: %v", k, typ)
		}
	}
	if typ["name"] != "Server" || typ["kind"] != "struct" || typ["line"] != 5.0 || typ["endLine"] != 7.0 {
		t.Errorf("type entry: %v", typ)
	}
	if kids, _ := typ["children"].([]any); len(kids) != 1 {
		t.Errorf("children: %v", typ["children"])
	}
	if kids, ok := entries[2]["children"].([]any); !ok || len(kids) != 0 {
		t.Errorf("an entry without members has children %v, want []", entries[2]["children"])
	}
}
