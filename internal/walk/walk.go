// Package walk walks a workspace the way git sees it: files and directories
// that .gitignore files (and .git/info/exclude) exclude are skipped, and so
// is the .git directory itself.
package walk

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// SkipDir and SkipAll, returned from a WalkFunc, skip a directory or stop.
var (
	SkipDir = fs.SkipDir
	SkipAll = fs.SkipAll
)

// WalkFunc is called for each file and directory Walk visits; rel is the
// slash-separated path relative to the root ("" is never passed).
type WalkFunc func(rel string, d fs.DirEntry) error

// Walk visits the tree under root in lexical order, skipping what git would
// ignore. Symlinks are reported, not followed. Unreadable directories are
// skipped silently.
func Walk(root string, fn WalkFunc) error {
	w := &walker{root: root, fn: fn}
	var rules []rule
	if data, err := os.ReadFile(filepath.Join(root, ".git", "info", "exclude")); err == nil {
		rules = parse(data, "")
	}
	err := w.dir("", rules)
	if errors.Is(err, SkipAll) {
		return nil
	}
	return err
}

type walker struct {
	root string
	fn   WalkFunc
}

func (w *walker) dir(rel string, rules []rule) error {
	abs := filepath.Join(w.root, filepath.FromSlash(rel))
	if data, err := os.ReadFile(filepath.Join(abs, ".gitignore")); err == nil {
		// Copy so sibling directories don't share the appended rules.
		rules = append(rules[:len(rules):len(rules)], parse(data, rel)...)
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		name := e.Name()
		if name == ".git" {
			continue
		}
		child := name
		if rel != "" {
			child = rel + "/" + name
		}
		isDir := e.IsDir()
		if ignored(rules, child, isDir) {
			continue
		}
		if err := w.fn(child, e); err != nil {
			if errors.Is(err, SkipDir) {
				if isDir {
					continue
				}
				return nil // SkipDir on a file skips the rest of its directory
			}
			return err
		}
		if isDir {
			if err := w.dir(child, rules); err != nil {
				return err
			}
		}
	}
	return nil
}

// Matcher answers whether single paths are ignored, for callers that do not
// walk (a tool given one path).
type Matcher struct{ root string }

// NewMatcher returns a matcher for the workspace at root.
func NewMatcher(root string) *Matcher { return &Matcher{root: root} }

// Ignored reports whether rel (slash-separated, relative to the root) or one
// of its parent directories is excluded by a .gitignore on its way down.
func (m *Matcher) Ignored(rel string, isDir bool) bool {
	rel = strings.Trim(path.Clean("/"+rel), "/")
	if rel == "" {
		return false
	}
	var rules []rule
	if data, err := os.ReadFile(filepath.Join(m.root, ".git", "info", "exclude")); err == nil {
		rules = parse(data, "")
	}
	parts := strings.Split(rel, "/")
	dir := ""
	for i, p := range parts {
		if data, err := os.ReadFile(filepath.Join(m.root, filepath.FromSlash(dir), ".gitignore")); err == nil {
			rules = append(rules, parse(data, dir)...)
		}
		child := p
		if dir != "" {
			child = dir + "/" + p
		}
		last := i == len(parts)-1
		if p == ".git" || ignored(rules, child, !last || isDir) {
			return true
		}
		dir = child
	}
	return false
}

// rule is one .gitignore line.
type rule struct {
	base    string // directory of the .gitignore, slash-separated, "" at the root
	re      *regexp.Regexp
	negate  bool
	dirOnly bool
}

// ignored applies rules in order; the last match wins.
func ignored(rules []rule, rel string, isDir bool) bool {
	out := false
	for _, r := range rules {
		if r.dirOnly && !isDir {
			continue
		}
		p := rel
		if r.base != "" {
			if !strings.HasPrefix(rel, r.base+"/") {
				continue
			}
			p = rel[len(r.base)+1:]
		}
		if r.re.MatchString(p) {
			out = !r.negate
		}
	}
	return out
}

// parse reads the rules of one .gitignore file in directory base.
func parse(data []byte, base string) []rule {
	var rules []rule
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if r, ok := parseLine(sc.Text(), base); ok {
			rules = append(rules, r)
		}
	}
	return rules
}

func parseLine(line, base string) (rule, bool) {
	line = strings.TrimSuffix(line, "\r")
	// Trailing spaces are dropped unless escaped with a backslash.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, "\\ ") {
		line = line[:len(line)-1]
	}
	if line == "" || strings.HasPrefix(line, "#") {
		return rule{}, false
	}
	r := rule{base: base}
	if strings.HasPrefix(line, "!") {
		r.negate = true
		line = line[1:]
	} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return rule{}, false
	}
	// A slash at the start or in the middle anchors the pattern to base;
	// otherwise it matches a name at any depth.
	anchored := strings.Contains(line, "/")
	line = strings.TrimPrefix(line, "/")
	expr := globToRegexp(line)
	if anchored {
		expr = "^" + expr + "$"
	} else {
		expr = "(^|/)" + expr + "$"
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return rule{}, false
	}
	r.re = re
	return r, true
}

// globToRegexp translates gitignore glob syntax: * and ? stay within one
// path element, ** spans elements, [...] is a class.
func globToRegexp(g string) string {
	var b strings.Builder
	for i := 0; i < len(g); i++ {
		c := g[i]
		switch c {
		case '*':
			if i+1 < len(g) && g[i+1] == '*' {
				// "**/" matches zero or more directories; a trailing "/**"
				// everything inside; elsewhere "**" acts as "*".
				switch {
				case i+2 < len(g) && g[i+2] == '/':
					b.WriteString("(.*/)?")
					i += 2
				case i+2 == len(g):
					b.WriteString(".*")
					i++
				default:
					b.WriteString("[^/]*")
					i++
				}
				continue
			}
			b.WriteString("[^/]*")
		case '?':
			b.WriteString("[^/]")
		case '[':
			j := strings.IndexByte(g[i+1:], ']')
			if j < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := g[i+1 : i+1+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j + 1
		case '\\':
			if i+1 < len(g) {
				i++
				b.WriteString(regexp.QuoteMeta(string(g[i])))
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}
