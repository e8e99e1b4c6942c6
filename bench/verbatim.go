package main

import (
	"regexp"
	"strconv"
	"strings"
)

// Verbatim retention: the lenient figure (retention.go) credits a fact
// when anything names its place or an outline lists its declaration, so a
// policy that keeps outlines and notes scores as if the model still saw
// the code. The verbatim figure credits a cited line only where the
// request shows that line's text:
//
//   - as the read tool numbers it ("107→func (b *Builder) Grow(n int) {");
//   - on an outline line at that line number whose text is the cited line
//     itself ("L107-121 func (b *Builder) Grow(n int)" for the line
//     "func (b *Builder) Grow(n int) {"): an outline entry that only names
//     the declaration, or sums up a signature spread over lines, does not
//     count;
//   - on a line that names the place (path:line, as grep results, notes,
//     recaps and summaries write it) and holds the cited line's text. A
//     note that names the place without the text does not count.
//
// A quote counts by the share of its lines shown so. A declaration's
// fact is one line; a task's verbatim retention is the share of its facts
// in view (the quote by its share).

// verbatimInView is how much of fact f the request text shows verbatim.
func verbatimInView(f Fact, text string) float64 {
	shown := 0
	for i, l := range f.Lines {
		if lineInView(text, f.Path, f.Line+i, l, f.Name != "" && i == 0) {
			shown++
		}
	}
	return float64(shown) / float64(max(len(f.Lines), 1))
}

// lineInView reports whether text shows line n of path, whose text is
// line, verbatim; outline says whether an outline entry may show it.
func lineInView(text, path string, n int, line string, outline bool) bool {
	if numbered(text, n, line) {
		return true
	}
	core := lineCore(line)
	if core == "" {
		return false
	}
	if outline && outlinedLine(text, n, core) {
		return true
	}
	return namedWith(text, path, n, core)
}

// lineCore is a source line's text as an outline or a note quotes it:
// without the indentation and an opening brace at its end.
func lineCore(line string) string {
	s := strings.TrimSpace(line)
	return strings.TrimSpace(strings.TrimSuffix(s, "{"))
}

// outlinedLine reports whether an outline in text has an entry at line n
// whose text is core.
func outlinedLine(text string, n int, core string) bool {
	re := regexp.MustCompile(`(?m)^[ \t]*L` + strconv.Itoa(n) + `(?:-\d+)? (.*)$`)
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		if lineCore(m[1]) == core {
			return true
		}
	}
	return false
}

// namedWith reports whether a line of text names path:n (the number not
// the start of a longer one) and holds core.
func namedWith(text, path string, n int, core string) bool {
	needle := path + ":" + strconv.Itoa(n)
	for i := 0; ; {
		j := strings.Index(text[i:], needle)
		if j < 0 {
			return false
		}
		at, end := i+j, i+j+len(needle)
		i = end
		if end < len(text) && text[end] >= '0' && text[end] <= '9' {
			continue
		}
		from := strings.LastIndexByte(text[:at], '\n') + 1
		to := strings.IndexByte(text[at:], '\n')
		if to < 0 {
			to = len(text) - at
		}
		if strings.Contains(text[from:at+to], core) {
			return true
		}
	}
}
