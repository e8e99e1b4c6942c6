package walk

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tree is a workspace whose .gitignore files exercise every rule form.
var tree = map[string]string{
	".gitignore":            "# comment\n*.log\n!keep.log\n/build\nnode_modules/\ndocs/**/*.tmp\n**/gen/*.go\nsecret?.txt\n[ab].bin\nspaced\\ \n\\#hash\ndir-only/\n",
	"main.go":               "",
	"app.log":               "",
	"keep.log":              "",
	"build/out.o":           "",
	"src/build/x.go":        "",
	"node_modules/a/i.js":   "",
	"web/node_modules/b.js": "",
	"docs/a/b/c.tmp":        "",
	"docs/a/b/c.md":         "",
	"docs/x.tmp":            "",
	"pkg/gen/z.go":          "",
	"pkg/gen/z.txt":         "",
	"gen/y.go":              "",
	"secret1.txt":           "",
	"secret12.txt":          "",
	"a.bin":                 "",
	"c.bin":                 "",
	"spaced ":               "",
	"#hash":                 "",
	"dir-only":              "a file named like a dir-only pattern",
	"sub/dir-only/f":        "",
	"sub/.gitignore":        "*.txt\n!important.txt\n/local\n",
	"sub/a.txt":             "",
	"sub/important.txt":     "",
	"sub/local/x":           "",
	"sub/deeper/local/y":    "",
	"other/a.txt":           "",
}

func TestWalkMatchesGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root := t.TempDir()
	for rel, c := range tree {
		write(t, root, rel, c)
	}
	git := exec.Command("git", "init", "-q")
	git.Dir = root
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	write(t, root, ".git/info/exclude", "other/\n")
	ls := exec.Command("git", "ls-files", "--others", "--cached", "--exclude-standard")
	ls.Dir = root
	out, err := ls.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	want := strings.Fields(strings.ReplaceAll(string(out), "\"", ""))
	// git quotes names with special characters; compare unquoted and
	// without the trailing-space file, which Fields cannot carry.
	want = filter(want)
	sort.Strings(want)

	var got []string
	err = Walk(root, func(rel string, d fs.DirEntry) error {
		if !d.IsDir() {
			got = append(got, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got = filter(got)
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Walk files differ from git's\n got: %q\nwant: %q", got, want)
	}

	m := NewMatcher(root)
	for rel := range tree {
		if strings.HasSuffix(rel, " ") {
			continue
		}
		inGit := contains(want, rel)
		if ig := m.Ignored(rel, false); ig == inGit {
			t.Errorf("Matcher.Ignored(%q) = %v, git lists it: %v", rel, ig, inGit)
		}
	}
}

func filter(s []string) []string {
	var out []string
	for _, x := range s {
		if strings.TrimSpace(x) == "spaced" || strings.HasPrefix(x, "spaced") {
			continue
		}
		out = append(out, x)
	}
	return out
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

func TestWalkSkipDirAndOrder(t *testing.T) {
	root := t.TempDir()
	for _, rel := range []string{"b/1", "a/2", "a/1", "c"} {
		write(t, root, rel, "")
	}
	var seen []string
	err := Walk(root, func(rel string, d fs.DirEntry) error {
		seen = append(seen, rel)
		if rel == "b" {
			return SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(seen, ","); got != "a,a/1,a/2,b,c" {
		t.Errorf("visit order %s", got)
	}
	n := 0
	Walk(root, func(string, fs.DirEntry) error {
		n++
		return SkipAll
	})
	if n != 1 {
		t.Errorf("SkipAll visited %d entries, want 1", n)
	}
}

func TestMatcherDotGit(t *testing.T) {
	m := NewMatcher(t.TempDir())
	if !m.Ignored(".git/config", false) {
		t.Error(".git/config not ignored")
	}
	if m.Ignored("../x", false) {
		t.Error("a path cleaned to the root's parent was ignored; only .gitignore rules decide")
	}
}
