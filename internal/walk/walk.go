// Package walk walks a workspace the way git sees it: files and directories
// that .gitignore files (and .git/info/exclude) exclude are skipped, and so
// is the .git directory itself.
package walk

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
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
