package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// Project instructions at every level. The fixed prefix carries the user's
// $XDG_CONFIG_HOME/reika/AGENTS.md and the workspace's AGENTS.md (its
// CLAUDE.md when it has no AGENTS.md), each cut at maxAgentsFile. An
// AGENTS.md (or CLAUDE.md) in a subdirectory is not in the prefix, so that
// the cache is kept: it is appended, cut at maxNestedFile, to the first
// tool result that touches its directory or one below, once per session.
// The session's log holds the results it was appended to, and a resume
// reads from them which were delivered.

// Bounds of instruction files: in the prefix, and nested.
const (
	maxAgentsFile = 16 << 10
	maxNestedFile = 8 << 10
)

// instructionNames are an instruction file's names, in the order tried in
// a directory: the first that exists is used.
var instructionNames = []string{"AGENTS.md", "CLAUDE.md"}

// instructionFile is one instruction file read.
type instructionFile struct {
	tag   string // the element it is wrapped in
	shown string // its name for the model and the user
	text  string // cut to the bound
	size  int    // its whole size in bytes
}

// block wraps the file for the model, saying when it was cut.
func (f instructionFile) block() string {
	return fmt.Sprintf("<%s file=%q>\n%s\n</%s>\n", f.tag, f.shown, strings.TrimRight(f.text, "\n"), f.tag)
}

// readInstructions reads the first instruction file of dir, cut at limit
// bytes; ok is false when there is none or it is empty.
func readInstructions(dir, root, tag string, limit int) (f instructionFile, ok bool) {
	for _, name := range instructionNames {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		if len(strings.TrimSpace(string(data))) == 0 {
			return f, false
		}
		f = instructionFile{tag: tag, shown: shownPath(root, filepath.Join(dir, name)), text: string(data), size: len(data)}
		if len(data) > limit {
			f.text = string(data[:limit]) + fmt.Sprintf("\n[… %s cut at %d KiB of its %d bytes …]", f.shown, limit>>10, len(data))
		}
		return f, true
	}
	return f, false
}

// prefixInstructions are the instruction files of the fixed prefix: the
// user's, then the workspace's.
func prefixInstructions(root string) []instructionFile {
	var out []instructionFile
	if c := configDir(); c != "" {
		if data, err := os.ReadFile(filepath.Join(c, "AGENTS.md")); err == nil && strings.TrimSpace(string(data)) != "" {
			f := instructionFile{tag: "user-instructions", shown: shownPath(root, filepath.Join(c, "AGENTS.md")), text: string(data), size: len(data)}
			if len(data) > maxAgentsFile {
				f.text = string(data[:maxAgentsFile]) + fmt.Sprintf("\n[… %s cut at %d KiB of its %d bytes …]", f.shown, maxAgentsFile>>10, len(data))
			}
			out = append(out, f)
		}
	}
	if f, ok := readInstructions(root, root, "project-instructions", maxAgentsFile); ok {
		out = append(out, f)
	}
	return out
}

// nestedMark finds the nested instruction blocks in a result.
var nestedMark = regexp.MustCompile(`<directory-instructions file="([^"]+)">`)

// nestedFor is what to append to a result that touched path (relative to
// root, or absolute): the instruction files of its directories below the
// root not yet delivered, outermost first, each marked delivered.
func nestedFor(root, path string, delivered map[string]bool) string {
	if path == "" {
		return ""
	}
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, path)
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	dir := filepath.Dir(rel)
	if st, err := os.Stat(abs); err == nil && st.IsDir() {
		dir = rel
	}
	var dirs []string
	for d := dir; d != "." && d != string(filepath.Separator) && d != ""; d = filepath.Dir(d) {
		dirs = append([]string{d}, dirs...)
	}
	var b strings.Builder
	for _, d := range dirs {
		key := filepath.ToSlash(d)
		if delivered[key] {
			continue
		}
		f, ok := readInstructions(filepath.Join(root, d), root, "directory-instructions", maxNestedFile)
		if !ok {
			continue
		}
		delivered[key] = true
		fmt.Fprintf(&b, "\n\n%s", strings.TrimRight(f.block(), "\n"))
	}
	return b.String()
}

// deliveredIn marks delivered the directories whose instructions res
// carries (a resumed session's results).
func deliveredIn(res *ctxwin.Result, delivered map[string]bool) {
	for _, m := range nestedMark.FindAllStringSubmatch(res.Text, -1) {
		delivered[filepath.ToSlash(filepath.Dir(m[1]))] = true
	}
}

// addNested appends to a result the instructions of the directory it
// touched, when they are new to the session.
func (s *session) addNested(res *ctxwin.Result) {
	if res.IsError || res.Path == "" {
		return
	}
	if s.offer.nested == nil {
		s.offer.nested = map[string]bool{}
	}
	if more := nestedFor(s.root, res.Path, s.offer.nested); more != "" {
		res.Text += more
	}
}
