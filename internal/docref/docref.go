// Package docref finds where the source files (and the READMEs) cite the
// design documents in docs/ and checks that every cited file and section
// exists. Its test runs
// the check over the repository; cmd/recite rewrites citations of the
// design files that used to live outside the repository (DESIGN.md,
// PROTOCOL.md, the research notes, the seed) into citations of docs/.
//
// A citation is a path docs/NAME.md, optionally followed by sections:
// "docs/design.md §3.5", "docs/engines.md §6, §7.4", "docs/design.md
// §3.7–3.8". A § without a file refers to the last doc file the same source
// file cited before it, so a citation may wrap onto the next comment line.
// A section exists when the doc has a heading that starts with its number
// ("## 3.5 Cutting one large result").
package docref

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Exts are the files whose citations are checked: the sources, and the
// Markdown outside docs/ (the READMEs).
var Exts = []string{".go", ".ts", ".lua", ".js", ".md"}

// Problem is one citation that points nowhere.
type Problem struct {
	File string // slash path relative to the root
	Line int
	Msg  string
}

func (p Problem) String() string { return p.File + ":" + strconv.Itoa(p.Line) + ": " + p.Msg }

// Citation is one cited doc section ("" Section: the whole file).
type Citation struct {
	File    string // the citing source file
	Line    int
	Doc     string // "docs/design.md"
	Section string // "3.5"
}

var (
	// docRe is a citation of a doc file.
	docRe = regexp.MustCompile(`\bdocs/([a-z0-9][a-z0-9_-]*)\.md\b`)
	// secRe is a section or a range of sections.
	secRe = regexp.MustCompile(`§\s?(\d+(?:\.\d+)*)(?:\s?[–-]\s?(\d+(?:\.\d+)*))?`)
	// outsideRe is a citation of a design file outside the repository:
	// the names of the first design, its notes and the seed, whatever the
	// directory in front of them, and paths into the shared folders.
	outsideRe = regexp.MustCompile(`(?:[\w.-]+/)*(?:\b(?:DESIGN|PROTOCOL|STYLE)\.md\b|\b(?:engines|peers-context|peers|lsp-conventions|treesitter|context-management)\.md\b)|\bshared/(?:design|seed)\b|\bdesign/notes\b|\.\./seed\b`)
	// headingRe is a numbered Markdown heading.
	headingRe = regexp.MustCompile(`^#{1,6}\s+§?(\d+(?:\.\d+)*)\.?(?:\s|$)`)
)

// token is one match in a line, in the order they appear.
type token struct {
	pos     int
	kind    byte // 'd' doc, 's' section, 'o' outside
	text    string
	a, b    string // the doc path; or a section and the end of a range
	outside bool
}

// lineTokens returns the citations of one line in order. A docs/ path that
// outsideRe also matches (docs/engines.md) is a doc, not an outside file.
func lineTokens(line string) []token {
	var ts []token
	docAt := map[int]bool{}
	for _, m := range docRe.FindAllStringSubmatchIndex(line, -1) {
		ts = append(ts, token{pos: m[0], kind: 'd', text: line[m[0]:m[1]], a: line[m[0]:m[1]]})
		docAt[m[1]] = true
	}
	for _, m := range outsideRe.FindAllStringIndex(line, -1) {
		if docAt[m[1]] && strings.HasSuffix(line[:m[1]], ".md") && isDocsPath(line[m[0]:m[1]]) {
			continue
		}
		ts = append(ts, token{pos: m[0], kind: 'o', text: line[m[0]:m[1]]})
	}
	for _, m := range secRe.FindAllStringSubmatchIndex(line, -1) {
		t := token{pos: m[0], kind: 's', text: line[m[0]:m[1]], a: line[m[2]:m[3]]}
		if m[4] >= 0 {
			t.b = line[m[4]:m[5]]
		}
		ts = append(ts, t)
	}
	slices.SortStableFunc(ts, func(x, y token) int { return x.pos - y.pos })
	return ts
}

// isDocsPath reports whether a matched path is docs/NAME.md (possibly
// behind ../ or ./), which is ours.
func isDocsPath(p string) bool {
	for strings.HasPrefix(p, "../") || strings.HasPrefix(p, "./") {
		p = p[strings.Index(p, "/")+1:]
	}
	return strings.HasPrefix(p, "docs/") && !strings.Contains(p[len("docs/"):], "/")
}

// Scan returns the citations of one source file, and problems for what it
// cites outside the repository and for sections cited with no doc before
// them.
func Scan(file string, src []byte) ([]Citation, []Problem) {
	var cites []Citation
	var probs []Problem
	cur := "" // the last doc cited; "!" after an outside citation
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for n := 1; sc.Scan(); n++ {
		for _, t := range lineTokens(sc.Text()) {
			switch t.kind {
			case 'd':
				cur = t.a
				cites = append(cites, Citation{File: file, Line: n, Doc: t.a})
			case 'o':
				cur = "!"
				probs = append(probs, Problem{file, n, "cites " + t.text + ", which is outside the repository: cite docs/ (go run ./internal/docref/cmd/recite)"})
			case 's':
				switch cur {
				case "!":
				case "":
					probs = append(probs, Problem{file, n, "cites " + t.text + " with no docs/ file before it"})
				default:
					for _, s := range []string{t.a, t.b} {
						if s != "" {
							cites = append(cites, Citation{File: file, Line: n, Doc: cur, Section: s})
						}
					}
				}
			}
		}
	}
	return cites, probs
}

// Sections returns the numbered sections of a Markdown file.
func Sections(src []byte) map[string]bool {
	secs := map[string]bool{}
	fence := false
	for line := range strings.SplitSeq(string(src), "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
			continue
		}
		if m := headingRe.FindStringSubmatch(line); m != nil && !fence {
			secs[m[1]] = true
		}
	}
	return secs
}

// Check scans every source file under root and returns the problems: the
// outside citations and sections without a doc of Scan, and every cited
// doc or section that does not exist. It also returns how many citations
// it found.
func Check(root string) ([]Problem, int, error) {
	files, err := SourceFiles(root)
	if err != nil {
		return nil, 0, err
	}
	docs := map[string]map[string]bool{} // doc → its sections; nil: no such file
	var probs []Problem
	n := 0
	for _, f := range files {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			return nil, 0, err
		}
		cites, ps := Scan(f, src)
		probs = append(probs, ps...)
		n += len(cites)
		for _, c := range cites {
			secs, seen := docs[c.Doc]
			if !seen {
				if b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(c.Doc))); err == nil {
					secs = Sections(b)
				}
				docs[c.Doc] = secs
			}
			switch {
			case secs == nil:
				probs = append(probs, Problem{c.File, c.Line, "cites " + c.Doc + ", which does not exist"})
			case c.Section != "" && !secs[c.Section]:
				probs = append(probs, Problem{c.File, c.Line, "cites " + c.Doc + " §" + c.Section + ", which has no such section"})
			}
		}
	}
	return probs, n, nil
}

// SourceFiles lists the source files under root (slash paths relative to
// it) whose citations count: those git tracks or would track (new files
// included, ignored ones not), else, outside a git checkout, every file
// outside hidden, node_modules, out and testdata directories. The docs
// themselves are not sources, nor is this package, whose comments and
// tests hold citations as examples.
func SourceFiles(root string) ([]string, error) {
	var all []string
	cmd := exec.Command("git", "ls-files", "-co", "--exclude-standard", "-z")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		all = strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	} else if all, err = walk(root); err != nil {
		return nil, err
	}
	var files []string
	for _, f := range all {
		if slices.Contains(Exts, filepath.Ext(f)) && !skipped(f) {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return nil, errors.New("no source files under " + root)
	}
	return files, nil
}

// skipped reports whether a file is in a directory that holds no sources.
func skipped(f string) bool {
	parts := strings.Split(f, "/")
	for _, d := range parts[:len(parts)-1] {
		if strings.HasPrefix(d, ".") || d == "node_modules" || d == "testdata" || d == "out" {
			return true
		}
	}
	return parts[0] == "docs" || strings.HasPrefix(f, "internal/docref/")
}

func walk(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, err := filepath.Rel(root, path)
			files = append(files, filepath.ToSlash(rel))
			return err
		}
		if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules") {
			return filepath.SkipDir
		}
		return nil
	})
	return files, err
}
