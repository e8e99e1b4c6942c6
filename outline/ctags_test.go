//go:build cgo

package outline

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// A ctagsCorpus is a set of real files on this machine, written by others,
// and how much of what universal-ctags finds at their top level the outline
// must find too.
type ctagsCorpus struct {
	name   string
	files  func() []string
	recall float64 // the least share of ctags' top-level tags the outline must have
}

var ctagsCorpora = []ctagsCorpus{
	{"python stdlib", pythonStdlib, 0.98},
	{"npm javascript", npmJS, 0.98},
	{"jquery", func() []string { return existing("/usr/share/javascript/jquery/jquery.js") }, 0.95},
	{"c headers", func() []string { return sample(100, "/usr/include/*.h") }, 0.93},
	{"c++ headers", func() []string { return sample(60, "/usr/include/c++/*/bits/*.h") }, 0.85},
}

// TestAgainstCtags compares the outline of real Python, JavaScript and C
// files with universal-ctags: every top-level tag ctags reports (a function,
// class, variable, macro, typedef... in no scope but a namespace, on a line that is not
// indented, and not a name ctags makes up for something anonymous) must be
// an entry of
// the outline with the same name whose range holds the tag's line, or a
// line of an imports entry (ctags tags `const x = require('y')`).
func TestAgainstCtags(t *testing.T) {
	ctags, err := exec.LookPath("ctags")
	if err != nil {
		t.Skip("universal-ctags is not installed (Debian package universal-ctags)")
	}
	if out, err := exec.Command(ctags, "--version").Output(); err != nil || !bytes.Contains(out, []byte("Universal Ctags")) {
		t.Skip("ctags is not universal-ctags")
	}
	for _, c := range ctagsCorpora {
		t.Run(c.name, func(t *testing.T) {
			files := c.files()
			if testing.Short() && len(files) > 20 {
				files = files[:20]
			}
			if len(files) == 0 {
				t.Skip("no files of this kind on this machine")
			}
			tags := runCtags(t, ctags, files)
			total, found := 0, 0
			var misses []string
			for _, f := range files {
				src, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				o, err := ParseLimited(f, src, Limits{})
				if err != nil {
					t.Errorf("%s: %v", f, err)
					continue
				}
				for _, tag := range tags[f] {
					total++
					if outlineHas(o.Entries, tag) {
						found++
					} else if len(misses) < 15 {
						misses = append(misses, f+":"+strconv.Itoa(tag.Line)+" "+tag.Kind+" "+tag.Name)
					}
				}
			}
			if total == 0 {
				t.Skip("ctags found no top-level tags")
			}
			recall := float64(found) / float64(total)
			t.Logf("%d files: %d of %d top-level ctags tags in the outline (%.1f%%)", len(files), found, total, 100*recall)
			if recall < c.recall {
				t.Errorf("recall %.3f below %.2f; some misses:\n  %s", recall, c.recall, strings.Join(misses, "\n  "))
			} else if len(misses) > 0 {
				t.Logf("some misses:\n  %s", strings.Join(misses, "\n  "))
			}
		})
	}
}

type ctagsTag struct {
	Name      string `json:"name"`
	Path      string `json:"path"`
	Pattern   string `json:"pattern"`
	Line      int    `json:"line"`
	Kind      string `json:"kind"`
	Scope     string `json:"scope"`
	ScopeKind string `json:"scopeKind"`
}

// runCtags returns the top-level tags of files, by path.
func runCtags(t *testing.T, ctags string, files []string) map[string][]ctagsTag {
	cmd := exec.Command(ctags, "--output-format=json", "--fields=+nKs", "--sort=no", "-L", "-", "-f", "-")
	cmd.Stdin = strings.NewReader(strings.Join(files, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ctags: %v", err)
	}
	tags := map[string][]ctagsTag{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var tag ctagsTag
		if json.Unmarshal(sc.Bytes(), &tag) != nil || tag.Name == "" {
			continue
		}
		// The outline lists a namespace's contents at the top level.
		if tag.Scope != "" && tag.ScopeKind != "namespace" {
			continue
		}
		// Top level: no scope, and a line that is not indented (ctags
		// gives the locals of an anonymous function no scope either).
		if !strings.HasPrefix(tag.Pattern, "/^") || strings.HasPrefix(tag.Pattern, "/^ ") || strings.HasPrefix(tag.Pattern, "/^\t") {
			continue
		}
		// Names ctags makes up for anonymous functions, structs and enums.
		if strings.HasPrefix(tag.Name, "AnonymousFunction") || strings.HasPrefix(tag.Name, "__anon") {
			continue
		}
		switch tag.Kind {
		case "header", "parameter", "local", "label", "unknown", "module", "namespace":
			continue // references, not definitions
		}
		tags[tag.Path] = append(tags[tag.Path], tag)
	}
	return tags
}

// outlineHas reports whether an entry (at any depth) matches tag.
func outlineHas(es []Entry, tag ctagsTag) bool {
	for _, e := range es {
		if tag.Line >= e.Line && tag.Line <= e.EndLine {
			// An imports entry holds `const x = require('y')`; a statement
			// entry (`if __name__ == "__main__":`) what is assigned in it.
			if e.Kind == KindImports || e.Kind == KindStatement || nameHas(e.Name, tag.Name) {
				return true
			}
		}
		if outlineHas(e.Children, tag) {
			return true
		}
	}
	return false
}

// nameHas: an entry name may list several names ("a, b") or qualify one
// ("exports.x", "Foo.prototype.bar", "W::draw").
func nameHas(entry, name string) bool {
	if entry == name {
		return true
	}
	for _, part := range strings.FieldsFunc(entry, func(r rune) bool { return strings.ContainsRune(", .:{}[]()<>", r) }) {
		if part == name {
			return true
		}
	}
	return false
}

func existing(paths ...string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// sample returns up to n of the files matching the globs, spread evenly
// over the sorted list.
func sample(n int, globs ...string) []string {
	var all []string
	for _, g := range globs {
		m, _ := filepath.Glob(g)
		all = append(all, m...)
	}
	sort.Strings(all)
	if len(all) <= n {
		return all
	}
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, all[i*len(all)/n])
	}
	return out
}

func pythonStdlib() []string {
	var dirs []string
	if out, err := exec.Command("python3", "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])").Output(); err == nil {
		dirs = append(dirs, strings.TrimSpace(string(out)))
	}
	m, _ := filepath.Glob("/usr/lib/python3*")
	dirs = append(dirs, m...)
	for _, d := range dirs {
		if files := sample(150, filepath.Join(d, "*.py"), filepath.Join(d, "*", "*.py")); len(files) > 0 {
			return files
		}
	}
	return nil
}

func npmJS() []string {
	var roots []string
	if out, err := exec.Command("npm", "root", "-g").Output(); err == nil {
		roots = append(roots, filepath.Join(strings.TrimSpace(string(out)), "npm"))
	}
	roots = append(roots, "/usr/lib/node_modules/npm", "/usr/local/lib/node_modules/npm")
	for _, r := range roots {
		if files := sample(150, filepath.Join(r, "lib", "*.js"), filepath.Join(r, "lib", "*", "*.js"), filepath.Join(r, "lib", "*", "*", "*.js")); len(files) > 0 {
			return files
		}
	}
	return nil
}
