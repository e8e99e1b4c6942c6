package tools

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/approval"
)

// escapeFixture is a workspace with every way out: a sibling directory
// outside it, symlinks to a file and a directory outside, a dangling
// symlink pointing outside, and symlinks that stay inside.
type escapeFixture struct {
	root, outside string
}

func newEscapeFixture(t *testing.T) escapeFixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	writeFile(t, filepath.Join(outside, "secret.txt"), "secret line\n")
	writeFile(t, filepath.Join(root, "src", "a.go"), "package a\n")
	links := map[string]string{
		"to-secret":      filepath.Join(outside, "secret.txt"),
		"to-outside":     outside,
		"rel-outside":    "../outside",
		"dangling":       filepath.Join(outside, "new.txt"),
		"src/to-a":       "a.go",
		"inside-dir":     "src",
		"src/up-and-out": "../../outside/secret.txt",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	return escapeFixture{root: root, outside: outside}
}

func TestResolve(t *testing.T) {
	fx := newEscapeFixture(t)
	env := &Env{Root: fx.root, TempDir: filepath.Join(fx.outside, "tmp")}
	tests := []struct {
		path   string
		inside bool
		rel    string // Rel when inside; Abs (relative to fx.outside) otherwise
	}{
		{"src/a.go", true, "src/a.go"},
		{"./src/../src/a.go", true, "src/a.go"},
		{fx.root + "/src/a.go", true, "src/a.go"},
		{"file://" + fx.root + "/src/a.go", true, "src/a.go"},
		{".", true, "."},
		{"src/new/dir/file.go", true, "src/new/dir/file.go"},
		{"src/to-a", true, "src/a.go"},
		{"inside-dir/a.go", true, "src/a.go"},
		{"inside-dir/new.go", true, "src/new.go"},
		{"../outside/secret.txt", false, "secret.txt"},
		{"src/../../outside/secret.txt", false, "secret.txt"},
		{fx.outside + "/secret.txt", false, "secret.txt"},
		{"to-secret", false, "secret.txt"},
		{"to-outside/secret.txt", false, "secret.txt"},
		{"to-outside/sub/new.txt", false, "sub/new.txt"},
		{"rel-outside/secret.txt", false, "secret.txt"},
		{"dangling", false, "new.txt"},
		{"src/up-and-out", false, "secret.txt"},
		{"../outside/tmp/x.txt", false, "tmp/x.txt"},
	}
	for _, tt := range tests {
		pl, err := env.resolve(tt.path)
		if err != nil {
			t.Errorf("resolve(%q): %v", tt.path, err)
			continue
		}
		if pl.Inside != tt.inside {
			t.Errorf("resolve(%q) = %+v, inside want %v", tt.path, pl, tt.inside)
			continue
		}
		want := tt.rel
		if !tt.inside {
			want = filepath.Join(fx.outside, tt.rel)
		}
		if pl.Rel != want {
			t.Errorf("resolve(%q).Rel = %q, want %q", tt.path, pl.Rel, want)
		}
	}
	if pl, _ := env.resolve("../outside/tmp/x.txt"); !pl.Temp {
		t.Errorf("a path in TempDir is not marked Temp: %+v", pl)
	}
	for _, bad := range []string{"", "  ", "a\x00b"} {
		if _, err := env.resolve(bad); err == nil {
			t.Errorf("resolve(%q) succeeded", bad)
		}
	}
}

func TestResolveSymlinkLoop(t *testing.T) {
	root := workspace(t, nil)
	if err := os.Symlink("b", filepath.Join(root, "a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a", filepath.Join(root, "b")); err != nil {
		t.Fatal(err)
	}
	env := &Env{Root: root}
	if _, err := env.resolve("a/x"); err == nil || !strings.Contains(err.Error(), "symbolic links") {
		t.Errorf("loop: %v", err)
	}
	res := run(t, newEnv(t, root, &approver{}), "read", `{"path":"a"}`)
	if !res.IsError {
		t.Errorf("read of a symlink loop: %+v", res)
	}
}

// Every tool that takes a path refuses one outside the workspace unless the
// user approves it, asking with Kind "outside"; denied, nothing outside is
// read or changed.
func TestOutsideNeedsApproval(t *testing.T) {
	calls := []struct {
		tool, args string
		changes    bool
	}{
		{"read", `{"path":%q}`, false},
		{"grep", `{"pattern":"secret","path":%q}`, false},
		{"glob", `{"pattern":"*","path":%q}`, false},
		{"write", `{"path":%q,"content":"pwned\n"}`, true},
		{"edit", `{"path":%q,"old_string":"secret","new_string":"pwned"}`, true},
	}
	paths := []string{"../outside/secret.txt", "OUTSIDE/secret.txt", "to-secret", "to-outside/secret.txt", "rel-outside/secret.txt", "src/up-and-out", "src/../../outside/secret.txt"}
	for _, c := range calls {
		for _, p := range paths {
			fx := newEscapeFixture(t)
			p = strings.Replace(p, "OUTSIDE", fx.outside, 1)
			target := p
			if c.tool == "glob" {
				target = filepath.Dir(p)
				if strings.HasPrefix(p, "to-secret") || p == "src/up-and-out" {
					continue // a file, not a directory
				}
			}
			args := strings.Replace(c.args, "%q", quote(target), 1)

			ap := &approver{decide: deny}
			res := run(t, newEnv(t, fx.root, ap), c.tool, args)
			if !res.IsError || !strings.Contains(res.Text, "denied by the user") || strings.Contains(res.Text, "secret line") {
				t.Errorf("%s %s denied: %+v", c.tool, args, res)
			}
			if k := ap.kinds(); len(k) != 1 || k[0] != "outside" {
				t.Errorf("%s %s: asked %v, want [outside]", c.tool, args, k)
			}
			if got := readFile(t, filepath.Join(fx.outside, "secret.txt")); got != "secret line\n" {
				t.Errorf("%s %s changed a file outside: %q", c.tool, args, got)
			}

			ap = &approver{decide: allow}
			res = run(t, newEnv(t, fx.root, ap), c.tool, args)
			if res.IsError {
				t.Errorf("%s %s approved: %+v", c.tool, args, res)
			}
			if k := ap.kinds(); len(k) == 0 || k[0] != "outside" {
				t.Errorf("%s %s approved: asked %v", c.tool, args, k)
			}
			if c.changes {
				if got := readFile(t, filepath.Join(fx.outside, "secret.txt")); !strings.Contains(got, "pwned") {
					t.Errorf("%s %s approved: file is %q", c.tool, args, got)
				}
			}
		}
	}
}

func TestDanglingSymlinkWrite(t *testing.T) {
	fx := newEscapeFixture(t)
	ap := &approver{decide: func(a approval.Request) bool { return a.Kind != "outside" }}
	res := run(t, newEnv(t, fx.root, ap), "write", `{"path":"dangling","content":"x"}`)
	if !res.IsError || !slices.Equal(ap.kinds(), []string{"outside"}) {
		t.Errorf("write through a dangling link: %+v, asked %v", res, ap.kinds())
	}
	if _, err := os.Stat(filepath.Join(fx.outside, "new.txt")); err == nil {
		t.Error("a file was created outside the workspace")
	}
}

func TestInsideSymlinksNeedNoApproval(t *testing.T) {
	fx := newEscapeFixture(t)
	ap := &approver{decide: deny}
	env := newEnv(t, fx.root, ap)
	res := run(t, env, "read", `{"path":"src/to-a"}`)
	if res.IsError || res.Path != "src/a.go" || len(ap.kinds()) != 0 {
		t.Errorf("read through an inside link: %+v, asked %v", res, ap.kinds())
	}
	res = run(t, env, "read", quoteArgs("path", fx.root+"/inside-dir/a.go"))
	if res.IsError || res.Path != "src/a.go" {
		t.Errorf("absolute path inside: %+v", res)
	}
}

// The temp dir is readable without approval (long outputs are saved
// there) but not writable.
func TestTempDir(t *testing.T) {
	root := workspace(t, nil)
	ap := &approver{decide: deny}
	env := newEnv(t, root, ap)
	saved := filepath.Join(env.TempDir, "bash-1.txt")
	writeFile(t, saved, "line one\nline two\n")
	for _, c := range [][2]string{
		{"read", quoteArgs("path", saved)},
		{"grep", `{"pattern":"two","path":` + quote(saved) + `}`},
		{"glob", `{"pattern":"*.txt","path":` + quote(env.TempDir) + `}`},
	} {
		res := run(t, env, c[0], c[1])
		if res.IsError || !strings.Contains(res.Text, "bash-1.txt") && !strings.Contains(res.Text, "line one") {
			t.Errorf("%s in the temp dir: %+v", c[0], res)
		}
	}
	if len(ap.kinds()) != 0 {
		t.Errorf("reading the temp dir asked %v", ap.kinds())
	}
	res := run(t, env, "write", `{"path":`+quote(saved)+`,"content":"x"}`)
	if !res.IsError || !slices.Equal(ap.kinds(), []string{"outside"}) {
		t.Errorf("write to the temp dir: %+v, asked %v", res, ap.kinds())
	}
}

func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

func quoteArgs(k, v string) string { return `{"` + k + `":` + quote(v) + `}` }
