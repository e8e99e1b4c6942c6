package docref

import (
	"regexp"
	"strings"
)

// Renames maps each design file that used to live outside the repository to
// its place in docs/. The sections keep their numbers, so "DESIGN.md §3.5"
// becomes "docs/design.md §3.5" and "engines.md §7.4" "docs/engines.md
// §7.4". The seed has no numbered sections: its rules, as built, are
// docs/design.md §3. STYLE.md, lsp-conventions.md and treesitter.md have
// no counterpart (what the code needs of the last two is in docs/design.md
// §6 and §7); Check reports a citation of them.
var Renames = map[string]string{
	"DESIGN":             "docs/design.md",
	"PROTOCOL":           "docs/protocol.md",
	"engines":            "docs/engines.md",
	"peers-context":      "docs/peers.md",
	"context-management": "docs/design.md §3",
}

var (
	// renameRe is a citation of one of Renames, with any directory in
	// front (../seed/, design/notes/, ../shared/design/).
	renameRe = regexp.MustCompile(`(?:[\w.-]+/)*\b(DESIGN|PROTOCOL|engines|peers-context|context-management)\.md\b`)
	// seedTwiceRe is the one place that cites the seed and DESIGN.md §3
	// together, which would read "docs/design.md §3" twice.
	seedTwiceRe = regexp.MustCompile(`the seed \(context-management\.md\), made precise in(\s*(?://|--)?\s*)DESIGN\.md §3`)
)

// Rewrite returns src with its citations of the outside design files
// turned into citations of docs/ (Renames), and every § that no doc file
// precedes in src given docs/design.md, the first design's sections being
// what such a § meant. It is idempotent: a rewritten src is returned
// unchanged.
func Rewrite(src []byte) []byte {
	s := seedTwiceRe.ReplaceAllString(string(src), "the seed, made precise in${1}docs/design.md §3")
	s = renameRe.ReplaceAllStringFunc(s, func(m string) string {
		if isDocsPath(m) {
			return m
		}
		name := m[strings.LastIndex(m, "/")+1 : len(m)-len(".md")]
		return Renames[name]
	})
	return []byte(anchorSections(s))
}

// anchorSections puts "docs/design.md " before each § that has no doc
// file before it (Scan's rule), scanning the lines in order.
func anchorSections(s string) string {
	lines := strings.SplitAfter(s, "\n")
	cur := ""
	for i, line := range lines {
		var b strings.Builder
		last, changed := 0, false
		for _, t := range lineTokens(line) {
			switch t.kind {
			case 'd':
				cur = t.a
			case 'o':
				cur = "!"
			case 's':
				if cur == "" {
					b.WriteString(line[last:t.pos])
					b.WriteString("docs/design.md ")
					last, changed = t.pos, true
					cur = "docs/design.md"
				}
			}
		}
		if changed {
			b.WriteString(line[last:])
			lines[i] = b.String()
		}
	}
	return strings.Join(lines, "")
}
