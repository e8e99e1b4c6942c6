package tools

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"
)

// globPattern is a compiled file pattern: * and ? match within one path
// element, ** any number of elements, [abc] and [!abc] a character class,
// {a,b} alternatives (nested, and holding other wildcards).
type globPattern struct {
	re *regexp.Regexp
	// base means the pattern has no slash and is matched against the file
	// name alone (grep's glob filter).
	base bool
}

// compileGlob compiles pattern. With anyDepth, a pattern without a slash
// matches a file name at any depth (grep's glob); otherwise it matches the
// whole relative path (the glob tool).
func compileGlob(pattern string, anyDepth bool) (*globPattern, error) {
	p := strings.TrimPrefix(pattern, "./")
	if p == "" {
		return nil, fmt.Errorf("the pattern is empty")
	}
	expr, err := globExpr(p)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile("^" + expr + "$")
	if err != nil {
		return nil, fmt.Errorf("invalid pattern %q: %v", pattern, err)
	}
	return &globPattern{re: re, base: anyDepth && !strings.Contains(p, "/")}, nil
}

// match reports whether the slash-separated relative path rel matches.
func (g *globPattern) match(rel string) bool {
	if g.base {
		return g.re.MatchString(path.Base(rel))
	}
	return g.re.MatchString(rel)
}

// globExpr translates a glob to a regular expression (without anchors).
func globExpr(g string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(g); i++ {
		c := g[i]
		switch c {
		case '*':
			if i+1 < len(g) && g[i+1] == '*' {
				atStart := i == 0 || g[i-1] == '/'
				switch {
				case atStart && i+2 < len(g) && g[i+2] == '/':
					b.WriteString("(?:[^/]*/)*") // "**/": zero or more directories
					i += 2
				case atStart && i+2 == len(g):
					b.WriteString(".*") // trailing "**": everything below
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
			if j == 0 { // "[]...]": a ] first is literal
				if k := strings.IndexByte(g[i+2:], ']'); k >= 0 {
					j = k + 1
				} else {
					j = -1
				}
			}
			if j < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := g[i+1 : i+1+j]
			neg := strings.HasPrefix(class, "!") || strings.HasPrefix(class, "^")
			if neg {
				class = class[1:]
			}
			class = strings.ReplaceAll(class, `\`, `\\`)
			class = strings.ReplaceAll(class, `[`, `\[`)
			if neg {
				b.WriteString("[^/" + class + "]")
			} else {
				b.WriteString("[" + class + "]")
			}
			i += j + 1
		case '{':
			end, alts := braceAlternatives(g, i)
			if end < 0 {
				b.WriteString(`\{`)
				continue
			}
			b.WriteString("(?:")
			for k, alt := range alts {
				if k > 0 {
					b.WriteByte('|')
				}
				e, err := globExpr(alt)
				if err != nil {
					return "", err
				}
				b.WriteString(e)
			}
			b.WriteString(")")
			i = end
		case '\\':
			if i+1 < len(g) {
				_, size := utf8.DecodeRuneInString(g[i+1:])
				b.WriteString(regexp.QuoteMeta(g[i+1 : i+1+size]))
				i += size
			} else {
				b.WriteString(`\\`)
			}
		default:
			r, size := utf8.DecodeRuneInString(g[i:])
			if r == utf8.RuneError && size == 1 {
				// An invalid byte; the matcher reads one in a name as U+FFFD.
				b.WriteString(`\x{FFFD}`)
			} else {
				b.WriteString(regexp.QuoteMeta(g[i : i+size]))
			}
			i += size - 1
		}
	}
	return b.String(), nil
}

// braceAlternatives splits the {a,b,...} group opening at g[open] into its
// alternatives, honoring nested braces; end is the index of the closing
// brace, or -1 when there is none.
func braceAlternatives(g string, open int) (end int, alts []string) {
	depth, start := 0, open+1
	for i := open; i < len(g); i++ {
		switch g[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i, append(alts, g[start:i])
			}
		case ',':
			if depth == 1 {
				alts = append(alts, g[start:i])
				start = i + 1
			}
		}
	}
	return -1, nil
}
