package walk

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// gitCases are workspaces whose .gitignore files exercise git's rules:
// nested files, negation, **, directory-only patterns, classes, escapes.
// Each is compared with what git itself lists.
var gitCases = []struct {
	name  string
	files map[string]string
}{
	{"every rule form", map[string]string{
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
		".git/info/exclude":     "other/\n",
	}},
	{"nested negation", map[string]string{
		".gitignore": "*.txt\n", "a.txt": "", "sub/.gitignore": "!keep.txt\n", "sub/keep.txt": "", "sub/drop.txt": "", "sub/deep/keep.txt": "",
	}},
	{"no negation under an excluded directory", map[string]string{
		".gitignore": "build/\n!build/keep\n", "build/keep": "", "build/x": "",
	}},
	{"dir/* then a negation", map[string]string{
		".gitignore": "dir/*\n!dir/keep\n", "dir/keep": "", "dir/x": "", "dir/sub/y": "",
	}},
	{"trailing /** then a negation", map[string]string{
		".gitignore": "abc/**\n!abc/keep.txt\n", "abc/keep.txt": "", "abc/x.txt": "", "abc/d/y.txt": "",
	}},
	{"whitelist", map[string]string{
		".gitignore": "*\n!*/\n!*.go\n", "a.go": "", "a.txt": "", "d/b.go": "", "d/b.md": "", "d/e/c.go": "",
	}},
	{"negation order", map[string]string{
		".gitignore": "!x.log\n*.log\n", "x.log": "", "sub/.gitignore": "!y.log\n", "sub/y.log": "", "sub/z.log": "",
	}},
	{"negations at depth", map[string]string{
		".gitignore": "/a/*\n!/a/b\n/a/b/*\n!/a/b/c\n", "a/x": "", "a/b/y": "", "a/b/c/z": "",
	}},
	{"leading, middle and trailing **", map[string]string{
		".gitignore": "**/foo\nbar/**\nbaz/**/qux\n**/n/\n",
		"foo":        "", "d/foo": "", "d/e/foo/x": "", "bar/1": "", "bar/d/2": "", "x/bar/3": "",
		"baz/qux": "", "baz/a/qux": "", "baz/a/b/qux": "", "x/baz/qux": "", "m/n/o": "", "n": "",
	}},
	{"** inside a name", map[string]string{
		".gitignore": "x**y\na**/b\n*q**/r\n", "xy": "", "xay": "", "xa/y": "", "ab/b": "", "a/b": "", "a/c/b": "", "aq/r": "", "aq/s/r": "",
	}},
	{"trailing slash after **", map[string]string{
		".gitignore": "**/out/\n", "out/a": "", "x/out/b": "", "x/y/out": "",
	}},
	{"directory-only patterns", map[string]string{
		".gitignore": "logs/\ncache/\n/tmp/\n", "logs": "a file", "d/logs/a": "", "cache/x": "", "a/cache/y": "", "tmp/z": "", "a/tmp/w": "",
	}},
	{"anchoring", map[string]string{
		".gitignore": "/*.c\ndoc/frotz/\nfrotz2/\na/*.go\n", "a.c": "", "d/b.c": "", "doc/frotz/x": "", "a/doc/frotz/y": "", "frotz2/z": "", "a/frotz2/w": "",
		"a/x.go": "", "b/a/y.go": "", "a/c/z.go": "",
	}},
	{"anchoring in a nested .gitignore", map[string]string{
		"sub/.gitignore": "/x\na/b\n*.o\n", "x": "", "sub/x": "", "sub/y/x": "", "sub/a/b": "", "sub/c/a/b": "", "sub/q.o": "", "sub/r/s.o": "", "t.o": "",
	}},
	{"classes", map[string]string{
		".gitignore": "[!ab].x\n[^cd].y\nf[[:digit:]].txt\n[]]z\n[a-c-e]r\nq[\\]]\n[z-a]w\n",
		"a.x":        "", "c.x": "", "c.y": "", "e.y": "", "f1.txt": "", "fa.txt": "", "]z": "", "az": "", "-r": "", "er": "", "dr": "", "q]": "", "zw": "",
	}},
	{"patterns git never matches", map[string]string{
		".gitignore": "a[b\nc\\\n[[:nope:]]x\n", "a[b": "", "ab": "", "c\\": "", "fx": "",
	}},
	{"escapes and spaces", map[string]string{
		".gitignore": "\\!bang\n\\#hash\nend\\ \ntrail   \na\\*b\n",
		"!bang":      "", "#hash": "", "end ": "", "trail": "", "a*b": "", "axb": "",
	}},
	{"question marks and ranges", map[string]string{
		".gitignore": "?.q\n[a-c]*.r\n", "a.q": "", "ab.q": "", "b1.r": "", "d1.r": "",
	}},
	{"braces are literal", map[string]string{
		".gitignore": "*.{a,b}\n", "x.a": "", "x.{a,b}": "",
	}},
	{"names beyond ASCII: ? is one byte", map[string]string{
		".gitignore": "ü*.txt\n?.md\n??.rst\n[ä]x\n", "über.txt": "", "ä.md": "", "a.md": "", "é.rst": "", "äx": "",
	}},
	{"crlf lines", map[string]string{
		".gitignore": "*.log\r\nbuild/\r\n", "a.log": "", "build/x": "", "b.txt": "",
	}},
	{"dot files", map[string]string{
		".gitignore": "*.swp\n.*\n!.gitignore\n", ".a.swp": "", ".hidden": "", "v.swp": "", "d/.env": "",
	}},
}

// git runs git in dir, away from the user's and the system's configuration.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

// gitListing is what git lists of the workspace: the files it would add.
func gitListing(t *testing.T, root string) []string {
	var files []string
	for f := range strings.SplitSeq(git(t, root, "ls-files", "-z", "--others", "--cached", "--exclude-standard"), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	return files
}

// walkListing is what Walk visits of the workspace: its files.
func walkListing(t *testing.T, root string) []string {
	var files []string
	err := Walk(root, func(rel string, d fs.DirEntry) error {
		if !d.IsDir() {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

func needGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("REIKA_TEST_STRICT") == "1" {
			t.Fatal("git not installed (required: REIKA_TEST_STRICT=1)")
		}
		t.Skip("git not installed")
	}
}

func TestWalkMatchesGit(t *testing.T) {
	needGit(t)
	t.Log(strings.TrimSpace(git(t, t.TempDir(), "version")))
	for _, c := range gitCases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			git(t, root, "init", "-q")
			for rel, content := range c.files {
				write(t, root, rel, content)
			}
			want := gitListing(t, root)
			if got := walkListing(t, root); !slices.Equal(got, want) {
				t.Errorf("Walk lists\n%q\ngit lists\n%q", got, want)
			}
			m := NewMatcher(root)
			for rel := range c.files {
				if strings.HasPrefix(rel, ".git/") {
					continue
				}
				if ig, inGit := m.Ignored(rel, false), slices.Contains(want, rel); ig == inGit {
					t.Errorf("Matcher.Ignored(%q) = %v, git lists it: %v", rel, ig, inGit)
				}
			}
		})
	}
}

// Random .gitignore lines over the characters that mean something to git,
// on names that tempt each rule, list what git lists.
func TestWalkMatchesGitRandom(t *testing.T) {
	needGit(t)
	root := t.TempDir()
	git(t, root, "init", "-q")
	names := []string{"a", "b", "ab", "a/b", "a/c/b", "ab/b", "x/a/b", "a.b", "a-b", "a]b", "a[b", "a*b", "é", "éa", "a/é/b",
		"[a]", "-", "b/b/a", "c/a/b/d", "a/a/a", "aa/b", "a b", `a\b`, "1", "a1", "a/1/b", "d/ba/a"}
	for _, n := range names {
		write(t, root, n+"/f", "") // each name a directory holding a file
		write(t, root, n+"x", "")  // and a file beside it
	}
	atoms := []string{"a", "b", "/", "*", "**", "?", "[", "]", "!", "^", "-", `\`, ":", "[:digit:]", "[:alpha:]", "é", " ", ".", "1"}
	r := rand.New(rand.NewPCG(7, 8))
	for range 150 {
		var lines []string
		for range 1 + r.IntN(2) {
			var b strings.Builder
			if r.IntN(5) == 0 {
				b.WriteString("!")
			}
			for range 1 + r.IntN(5) {
				b.WriteString(atoms[r.IntN(len(atoms))])
			}
			lines = append(lines, b.String())
		}
		write(t, root, ".gitignore", strings.Join(lines, "\n")+"\n")
		if got, want := walkListing(t, root), gitListing(t, root); !slices.Equal(got, want) {
			t.Errorf(".gitignore %q: Walk lists\n%q\ngit lists\n%q", lines, got, want)
		}
	}
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

// Walking the Go distribution's source tree, a large real workspace.
func BenchmarkWalkGoSource(b *testing.B) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("go env GOROOT:", err)
	}
	root := filepath.Join(strings.TrimSpace(string(out)), "src")
	n := 0
	for b.Loop() {
		n = 0
		Walk(root, func(string, fs.DirEntry) error { n++; return nil })
	}
	b.ReportMetric(float64(n), "entries")
}

// Matching paths against a .gitignore of the size real projects keep (a
// Node project's: 60 rules of every form).
func BenchmarkIgnored(b *testing.B) {
	var lines []string
	for i := range 15 {
		lines = append(lines, fmt.Sprintf("*.ext%d", i), fmt.Sprintf("/build%d/", i), fmt.Sprintf("**/cache%d/**", i), fmt.Sprintf("!keep%d.ext%d", i, i))
	}
	rules := parse([]byte(strings.Join(lines, "\n")), "")
	paths := []string{"src/main.go", "src/deep/er/file.ext3", "build2/x", "a/cache7/b/c", "keep4.ext4", "docs/ünïcode.md"}
	for b.Loop() {
		for _, p := range paths {
			ignored(rules, p, false)
		}
	}
}
