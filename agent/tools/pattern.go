package tools

import (
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// globPattern is a file pattern of the glob tool and of grep's glob filter,
// matched by doublestar: * and ? match within one path element, ** any
// number of elements, [abc] and [!abc] a character class, {a,b}
// alternatives (nested, and holding other wildcards, ** included).
//
// These are the rules of the glob tool's and grep's patterns, which the
// model writes; .gitignore patterns follow git's own rules (no braces, ?
// a byte, POSIX classes) and have their own translator in internal/walk.
type globPattern struct {
	// pattern is in doublestar's syntax (see doublestarSyntax).
	pattern string
	// base means the pattern has no slash and is matched against the file
	// name alone (grep's glob filter).
	base bool
}

// compileGlob checks pattern. With anyDepth, a pattern without a slash
// matches a file name at any depth (grep's glob); otherwise it matches the
// whole relative path (the glob tool).
func compileGlob(pattern string, anyDepth bool) (*globPattern, error) {
	p := strings.TrimPrefix(pattern, "./")
	if p == "" {
		return nil, fmt.Errorf("the pattern is empty")
	}
	ds := doublestarSyntax(p)
	if strings.HasSuffix(ds, "/**") && !escaped(ds, len(ds)-3) {
		// doublestar lets a/** match a itself; it means what is below a.
		ds += "/*"
	}
	if !doublestar.ValidatePattern(ds) {
		return nil, fmt.Errorf("invalid pattern %q", pattern)
	}
	return &globPattern{pattern: ds, base: anyDepth && !strings.Contains(p, "/")}, nil
}

// match reports whether the slash-separated relative path rel matches.
func (g *globPattern) match(rel string) bool {
	if g.base {
		rel = path.Base(rel)
	}
	return doublestar.MatchUnvalidated(g.pattern, rel)
}

// doublestarSyntax rewrites what a shell reads literally but doublestar
// rejects as malformed: a [ or { that is never closed, a } that closes
// nothing and a trailing backslash become escaped literals, and a ] first
// in a class ([]a], [!]]) an escaped member, as POSIX reads it. A negated
// class gets / as a member, since doublestar would match a / with it.
func doublestarSyntax(p string) string {
	var b strings.Builder
	open := 0 // braces opened that have their closing brace
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '\\':
			if i+1 == len(p) {
				b.WriteString(`\\`)
				continue
			}
			b.WriteString(p[i : i+2])
			i++
		case '[':
			end := classEnd(p, i)
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			b.WriteString(classSyntax(p[i : end+1]))
			i = end
		case '{':
			if braceEnd(p, i) < 0 {
				b.WriteString(`\{`)
				continue
			}
			open++
			b.WriteByte(c)
		case '}':
			if open == 0 {
				b.WriteString(`\}`)
				continue
			}
			open--
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// classEnd is the index of the ] closing the class that opens at p[open],
// or -1. A ] right after the [ (or after [! and [^) is a member.
func classEnd(p string, open int) int {
	i := open + 1
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		i++
	}
	if i < len(p) && p[i] == ']' {
		i++
	}
	for ; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case ']':
			return i
		}
	}
	return -1
}

// classSyntax rewrites class (from [ to ] inclusive) for doublestar: a ]
// first among the members is escaped, and a negated class excludes / too.
func classSyntax(class string) string {
	lead, neg := 1, false
	if len(class) > 1 && (class[1] == '!' || class[1] == '^') {
		lead, neg = 2, true
	}
	body := class[lead : len(class)-1]
	if strings.HasPrefix(body, "]") {
		body = `\` + body
	}
	if neg {
		// Before a last unescaped -, which would otherwise start a range.
		if n := len(body); n > 0 && body[n-1] == '-' && !escaped(body, n-1) {
			body = body[:n-1] + "/-"
		} else {
			body += "/"
		}
	}
	return class[:lead] + body + "]"
}

// escaped reports whether s[i] follows an odd number of backslashes.
func escaped(s string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// braceEnd is the index of the } closing the brace that opens at p[open],
// honouring escapes, classes and nested braces; -1 when there is none.
func braceEnd(p string, open int) int {
	depth := 0
	for i := open; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '[':
			if end := classEnd(p, i); end >= 0 {
				i = end
			}
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}
