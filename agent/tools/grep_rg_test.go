package tools

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// needRipgrep skips a test when rg is not installed, or fails it under
// REIKA_TEST_STRICT=1; it logs the version that runs.
func needRipgrep(t *testing.T) {
	t.Helper()
	rg := ripgrepPath()
	if rg == "" {
		if os.Getenv("REIKA_TEST_STRICT") == "1" {
			t.Fatal("ripgrep (rg, 11 or later) not installed (required: REIKA_TEST_STRICT=1; Debian's ripgrep)")
		}
		t.Skip("ripgrep (rg, 11 or later) not installed; grep's fast path is not tested")
	}
	out, _ := exec.Command(rg, "--version").Output()
	t.Logf("%s: %s", rg, strings.SplitN(string(out), "\n", 2)[0])
}

// withEngine runs f with grep's search forced into Go or into ripgrep.
func withEngine(t *testing.T, rg bool, f func()) {
	t.Helper()
	saved := ripgrepMinBytes
	defer func() { ripgrepMinBytes = saved }()
	ripgrepMinBytes = math.MaxInt64
	if rg {
		ripgrepMinBytes = 0
	}
	f()
}

// rgTree is searchTree and files that tempt every difference between Go's
// regexp and rg's: CRLF and lone CR, bytes that are not UTF-8, NULs before
// and after the 8000 bytes that make a file binary, case folding beyond
// ASCII, long lines, names rg could misread, no newline at the end.
func rgTree() map[string]string {
	files := map[string]string{}
	for k, v := range searchTree {
		files[k] = v
	}
	big := strings.Repeat("filler line\n", 700) // saved to a temp file
	for k, v := range map[string]string{
		"crlf.txt":         "TODO first\r\nsecond TODO\r\nend\r\nabc\r",
		"lone-cr.txt":      "a\rb TODO\nx\r\n",
		"latin1.txt":       "caf\xe9 TODO\n\xff\xfe\n\x80abc\xffdef\n",
		"nul-late.txt":     strings.Repeat("x", 8100) + "\x00 TODO late\nTODO after\n",
		"fold.txt":         "\u212aelvin TODO\nKELVIN\nſtop STOP stop\n",
		"long.js":          strings.Repeat("a", 5000) + "TODO" + strings.Repeat("b", 5000) + "\n",
		"-dash.txt":        "TODO dash\n",
		"sp ace/ü n.txt":   "TODO space\n",
		"no-newline.txt":   "last TODO",
		"empty.txt":        "",
		"nul-line.txt":     strings.Repeat("y", 9000) + "\na\x00b TODO\n",
		"words.go":         "foo_bar foo bar\nαfoo fooβ\n123 ٣٤ x\n\tspaced  \n",
		"big/filler.txt":   big + "TODO end\n",
		"ignored/.keep":    "",
		"sub/deep/utf.txt": "Ünïcödé TODO\n日本語 TODO\n\ufffd replacement\n",
	} {
		files[k] = v
	}
	return files
}

// rgSearches are grep calls whose results must not depend on the engine.
var rgSearches = []string{
	`{"pattern":"TODO"}`,
	`{"pattern":"(?i)todo|bug|note:"}`,
	`{"pattern":"\\bfoo\\b"}`,
	`{"pattern":"\\Bfoo|foo\\B"}`,
	`{"pattern":"^abc$"}`,
	`{"pattern":"TODO$"}`,
	`{"pattern":"O$\\b"}`,
	`{"pattern":"(\\b|O$)+"}`,
	`{"pattern":"\\bTODO\\b\\r?$"}`,
	`{"pattern":"\\r"}`,
	`{"pattern":"\\r$"}`,
	`{"pattern":"a.b"}`,
	`{"pattern":"(?s)a.b"}`,
	`{"pattern":"caf.\\s"}`,
	`{"pattern":"[^a-z ]+"}`,
	`{"pattern":"\\x{FFFD}"}`,
	`{"pattern":"[\\x{FFFD}]def"}`,
	`{"pattern":"\\x00"}`,
	`{"pattern":"(?i)kelvin"}`,
	`{"pattern":"(?i)ſtop"}`,
	`{"pattern":"\\d+\\s*\\w"}`,
	`{"pattern":"\\pL+ TODO"}`,
	`{"pattern":"\\p{Greek}"}`,
	`{"pattern":"^"}`,
	`{"pattern":"x*"}`,
	`{"pattern":"^$"}`,
	`{"pattern":"(TODO|filler)\\s(end|line)"}`,
	`{"pattern":"(?U)T.+?O"}`,
	`{"pattern":"a{2,5}b"}`,
	`{"pattern":"\\n"}`,
	`{"pattern":"[^\\x00-\\x{10FFFF}]"}`,
	`{"pattern":"TODO","glob":"*.go"}`,
	`{"pattern":"TODO","glob":"**/*.txt"}`,
	`{"pattern":"TODO","path":"sub"}`,
	`{"pattern":"TODO","path":"crlf.txt"}`,
	`{"pattern":"TODO","path":"debug.log"}`,
	`{"pattern":"line","path":"big"}`,
	`{"pattern":"FIXME"}`,
}

// The same searches give the same results in Go and through ripgrep:
// .gitignore, the glob filter, binary files, the output cap and its temp
// file, line numbers, excerpts of long lines, open buffers.
func TestGrepRipgrepSameResults(t *testing.T) {
	needRipgrep(t)
	root := workspace(t, rgTree())
	writeFile(t, filepath.Join(root, "huge.txt"), strings.Repeat("TODO huge\n", GrepFileBytes/10+1))
	disk := newEnv(t, root, &approver{})
	buffers := newEnv(t, root, &approver{})
	buffers.Files = &overlaidFiles{fakeFiles{buffers: map[string]string{
		filepath.Join(root, "main.go"):     "TODO in the buffer\n",
		filepath.Join(root, "words.go"):    "no match here\n",
		filepath.Join(root, "new-file.go"): "TODO only in a buffer, not a file\n",
	}}}
	for _, env := range []*Env{disk, buffers} {
		for _, args := range rgSearches {
			var inGo, inRg ctxwin.Result
			withEngine(t, false, func() { inGo = run(t, env, "grep", args) })
			before := ripgrepRuns.Load()
			withEngine(t, true, func() { inRg = run(t, env, "grep", args) })
			if a, b := resultShape(t, inGo), resultShape(t, inRg); a != b {
				t.Errorf("%s (files %T): Go and ripgrep differ\nGo:\n%s\nripgrep:\n%s", args, env.Files, a, b)
			}
			if _, ok := ripgrepPattern(jsonField(t, args, "pattern")); ok && ripgrepRuns.Load() == before {
				t.Errorf("%s: ripgrep did not run", args)
			}
		}
	}
	// Files that cannot tell their buffers are all read in Go.
	env := newEnv(t, root, &approver{})
	env.Files = &fakeFiles{buffers: map[string]string{filepath.Join(root, "main.go"): "TODO in the buffer\n"}}
	before := ripgrepRuns.Load()
	var res ctxwin.Result
	withEngine(t, true, func() { res = run(t, env, "grep", `{"pattern":"TODO","glob":"main.go"}`) })
	if res.Text != "main.go:1:TODO in the buffer\n" || ripgrepRuns.Load() != before {
		t.Errorf("without OverlaidFiles: %q, %d rg runs", res.Text, ripgrepRuns.Load()-before)
	}
}

// Random patterns over the characters where the syntaxes differ, on the
// same workspace: the same results either way.
func TestGrepRipgrepRandomPatterns(t *testing.T) {
	needRipgrep(t)
	root := workspace(t, rgTree())
	env := newEnv(t, root, &approver{})
	atoms := []string{"a", "b", "T", "O", "é", "ü", "\\r", "\\x{FFFD}", ".", "[^a]", "[a-z]", "\\w", "\\W", "\\s", "\\S", "\\d", "\\b", "\\B",
		"^", "$", "*", "+", "?", "|", "(", ")", "(?i)", "(?s)", "(?m)", "\\A", "\\z", "\\pL", "\\p{Lu}", "[[:alpha:]]", "[\\x80-\\xff]", " ", "k", "ſ",
		"x{2}", "x{0}", "\\x00", "\\r?"}
	r := rand.New(rand.NewPCG(randomSeed, 6))
	compared := 0
	for range randomPatterns {
		var b strings.Builder
		for range 1 + r.IntN(5) {
			b.WriteString(atoms[r.IntN(len(atoms))])
		}
		args := jsonArgs(t, map[string]any{"pattern": b.String()})
		var inGo, inRg ctxwin.Result
		withEngine(t, false, func() { inGo = run(t, env, "grep", args) })
		if inGo.IsError {
			continue // not a pattern
		}
		withEngine(t, true, func() { inRg = run(t, env, "grep", args) })
		if a, b := resultShape(t, inGo), resultShape(t, inRg); a != b {
			t.Errorf("%s: Go and ripgrep differ\nGo:\n%s\nripgrep:\n%s", args, a, b)
		}
		compared++
	}
	t.Logf("%d random patterns compared", compared)
}

// randomPatterns is how many random patterns are compared (a variable, to
// look for more at times).
var (
	randomPatterns        = 150
	randomSeed     uint64 = 5
)

// overlaidFiles is fakeFiles that names its buffers.
type overlaidFiles struct{ fakeFiles }

func (f *overlaidFiles) OverlaidPaths() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var paths []string
	for p := range f.buffers {
		paths = append(paths, p)
	}
	return paths
}

// resultShape is a result as text to compare, with its temp file's
// content in place of its name.
func resultShape(t *testing.T, r ctxwin.Result) string {
	t.Helper()
	text := r.Text
	saved := ""
	if r.SavedTo != "" {
		text = strings.ReplaceAll(text, r.SavedTo, "SAVED")
		saved = readFile(t, r.SavedTo)
	}
	return fmt.Sprintf("error %v\nsummary %s\nquery %s\ntext %q\nsaved %q", r.IsError, r.Summary, r.Query, text, saved)
}

func jsonField(t *testing.T, args, key string) string {
	t.Helper()
	a := parseArgs([]byte(args), "")
	return a.str(key, false)
}
