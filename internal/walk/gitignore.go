package walk

import (
	"bufio"
	"bytes"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"
)

// The .gitignore rules are our own, translated to regular expressions the
// way git's wildmatch reads them, because the kept libraries read them less
// faithfully. Measured against git 2.39's own listing on the 22 workspaces
// of TestWalkMatchesGit and on 800 random pattern sets of the kind
// TestWalkMatchesGitRandom makes: ours agrees on all of them; go-git
// v5.19.3's plumbing/format/gitignore differs on 5 workspaces and 12 sets
// (it reads [!a] as a class of ! and a, never matches a**/b, lets abc/**
// exclude abc itself so that !abc/keep cannot bring a file back, breaks
// the * then !*/ whitelist, and reads ? as a character); sabhiram/
// go-gitignore differs on 15 workspaces; gocodewalker is not served by the
// module proxy. doublestar, which serves the glob tool, reads {a,b} as
// alternatives (git: literal braces), ? as a character (git: a byte) and
// has no [[:digit:]] classes. The walk is as fast either way (GOROOT/src,
// 12.8k entries, about 40 ms).

// rule is one .gitignore line.
type rule struct {
	base string // directory of the .gitignore, slash-separated, "" at the root
	// spelledBase is base spelled with byteRunes.
	spelledBase string
	// re matches the path below base (or the name alone, with basename)
	// spelled with byteRunes.
	re       *regexp.Regexp
	negate   bool
	dirOnly  bool
	basename bool // the pattern has no slash: it matches a name at any depth
}

// ignored applies rules; the last that matches decides.
func ignored(rules []rule, rel string, isDir bool) bool {
	spelled := byteRunes(rel)
	name := path.Base(spelled)
	for i := len(rules) - 1; i >= 0; i-- {
		r := &rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		p := spelled
		if r.base != "" {
			if len(rel) <= len(r.base) || rel[len(r.base)] != '/' || !strings.HasPrefix(rel, r.base) {
				continue
			}
			p = spelled[len(r.spelledBase)+1:]
		}
		if r.basename {
			p = name
		}
		if r.re.MatchString(p) {
			return !r.negate
		}
	}
	return false
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

// parseLine reads one line; ok is false for blank lines, comments and
// patterns git can never match (an unclosed class, a trailing backslash).
func parseLine(line, base string) (r rule, ok bool) {
	line = strings.TrimSuffix(line, "\r")
	// Trailing spaces are dropped unless escaped with a backslash.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, "\\ ") {
		line = line[:len(line)-1]
	}
	if line == "" || strings.HasPrefix(line, "#") {
		return rule{}, false
	}
	r = rule{base: base, spelledBase: byteRunes(base)}
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
	r.basename = !strings.Contains(line, "/")
	expr, ok := wildmatchExpr(strings.TrimPrefix(line, "/"), !r.basename)
	if !ok {
		return rule{}, false
	}
	re, err := regexp.Compile("^(?s:" + expr + ")$")
	if err != nil {
		return rule{}, false // not expected: expr is built to compile
	}
	r.re = re
	return r, true
}

// wildmatchExpr translates a .gitignore pattern to a regular expression
// over byteRunes, as git's wildmatch reads it: ? is one byte and * any
// bytes, never a /; [...] is a class of bytes ([!...] and [^...] negated,
// a ] first is a member, a-z ranges, [:alpha:] and the other POSIX
// classes, backslash escapes); a ** between slashes (or at an end) spans
// directories. A pathname pattern (one with a slash) is matched as git
// does: its literal start is compared first and the rest matched as a
// pattern of its own, so a ** right after that start spans directories too
// (a**/b matches a/c/b, as git's listing shows). ok is false when git
// never matches the pattern.
func wildmatchExpr(p string, pathname bool) (expr string, ok bool) {
	var b strings.Builder
	start := 0
	if pathname {
		if start = strings.IndexAny(p, `*?[\`); start < 0 {
			start = len(p)
		}
		b.WriteString(quoteBytes(p[:start]))
	}
	for i := start; i < len(p); i++ {
		switch c := p[i]; c {
		case '*':
			j := i
			for j < len(p) && p[j] == '*' {
				j++
			}
			slashAfter := j < len(p) && p[j] == '/' || j+1 < len(p) && p[j] == '\\' && p[j+1] == '/'
			if pathname && j-i >= 2 && (i == start || p[i-1] == '/') && (j == len(p) || slashAfter) {
				if j == len(p) {
					b.WriteString(".*") // a trailing **: everything below
				} else {
					b.WriteString("(?:.*/)?") // **/: zero or more directories
					if p[j] == '\\' {
						j++
					}
					j++
				}
			} else {
				b.WriteString("[^/]*")
			}
			i = j - 1
		case '?':
			b.WriteString("[^/]")
		case '[':
			class, end, ok := wildmatchClass(p, i)
			if !ok {
				return "", false
			}
			b.WriteString(class)
			i = end
		case '\\':
			if i+1 == len(p) {
				return "", false
			}
			i++
			b.WriteString(quoteBytes(p[i : i+1]))
		default:
			b.WriteString(quoteBytes(p[i : i+1]))
		}
	}
	return b.String(), true
}

// posixClasses are the [:name:] classes of git's wildmatch (ASCII only).
var posixClasses = map[string]func(c byte) bool{
	"alnum":  func(c byte) bool { return isAlpha(c) || isDigit(c) },
	"alpha":  isAlpha,
	"blank":  func(c byte) bool { return c == ' ' || c == '\t' },
	"cntrl":  func(c byte) bool { return c < 0x20 || c == 0x7f },
	"digit":  isDigit,
	"graph":  func(c byte) bool { return c > 0x20 && c < 0x7f },
	"lower":  func(c byte) bool { return c >= 'a' && c <= 'z' },
	"print":  func(c byte) bool { return c >= 0x20 && c < 0x7f },
	"punct":  func(c byte) bool { return c > 0x20 && c < 0x7f && !isAlpha(c) && !isDigit(c) },
	"space":  func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' },
	"upper":  func(c byte) bool { return c >= 'A' && c <= 'Z' },
	"xdigit": func(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' },
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// wildmatchClass translates the class opening at p[open] into a regular
// expression class over byteRunes that never matches /, and returns the
// index of its closing ]. ok is false for a class git cannot read (never
// closed, or an unknown [:name:]), which makes the pattern match nothing.
func wildmatchClass(p string, open int) (class string, end int, ok bool) {
	var member [256]bool
	i := open + 1
	negated := i < len(p) && (p[i] == '!' || p[i] == '^')
	if negated {
		i++
	}
	prev := -1 // the previous single member, which a - may extend to a range
	for first := true; ; first = false {
		if i >= len(p) {
			return "", 0, false
		}
		c := p[i]
		switch {
		case c == ']' && !first:
			return classExpr(&member, negated), i, true
		case c == '\\':
			if i+1 >= len(p) {
				return "", 0, false
			}
			i++
			member[p[i]] = true
			prev = int(p[i])
		case c == '-' && prev >= 0 && i+1 < len(p) && p[i+1] != ']':
			i++
			hi := p[i]
			if hi == '\\' {
				if i+1 >= len(p) {
					return "", 0, false
				}
				i++
				hi = p[i]
			}
			for x := prev; x <= int(hi); x++ {
				member[x] = true
			}
			prev = -1
		case c == '[' && i+1 < len(p) && p[i+1] == ':':
			close := strings.IndexByte(p[i+2:], ']')
			if close < 0 {
				return "", 0, false
			}
			name := p[i+2 : i+2+close]
			if !strings.HasSuffix(name, ":") {
				member['['] = true // no ":]": a plain [
				prev = '['
				break
			}
			is, known := posixClasses[strings.TrimSuffix(name, ":")]
			if !known {
				return "", 0, false
			}
			for x := range 256 {
				if is(byte(x)) {
					member[x] = true
				}
			}
			i += 2 + close
			prev = -1
		default:
			member[c] = true
			prev = int(c)
		}
		i++
	}
}

// classExpr spells a set of bytes (negated or not, never /) as a class
// over byteRunes.
func classExpr(member *[256]bool, negated bool) string {
	var b strings.Builder
	b.WriteByte('[')
	empty := true
	in := func(x int) bool { return member[x] != negated && x != '/' }
	for lo := 0; lo < 256; lo++ {
		if !in(lo) {
			continue
		}
		hi := lo
		for hi+1 < 256 && in(hi+1) {
			hi++
		}
		b.WriteString(runeEscape(lo))
		if hi > lo {
			b.WriteString("-" + runeEscape(hi))
		}
		empty = false
		lo = hi
	}
	if empty {
		return `[^\x00-\x{ff}]` // nothing: every byteRune is ≤ 0xff
	}
	return b.String() + "]"
}

func runeEscape(x int) string {
	const hex = "0123456789abcdef"
	return `\x{` + string(hex[x>>4]) + string(hex[x&15]) + `}`
}

// quoteBytes is regexp.QuoteMeta of s spelled with byteRunes.
func quoteBytes(s string) string { return regexp.QuoteMeta(byteRunes(s)) }

// byteRunes spells each byte of s as the rune of the same value, so that a
// regular expression matches bytes (git's wildmatch reads bytes, Go's
// regexp runes). ASCII strings are their own spelling.
func byteRunes(s string) string {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf {
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) * 2)
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		b.WriteRune(rune(s[i]))
	}
	return b.String()
}
