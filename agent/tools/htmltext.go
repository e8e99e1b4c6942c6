package tools

import (
	"html"
	"net/url"
	"strings"
)

// htmlToText turns an HTML page into readable text, in the manner of a
// Markdown rendering: headings as #, list items as -, links as
// [text](url) resolved against base, pre blocks fenced with ```, code
// spans in backticks. Scripts, styles, the head (but its title), navigation
// and other non-content elements are dropped; entities are decoded; blank
// lines are collapsed. It is a small tokenizer, not an HTML5 parser: it
// aims at readable text from real pages, and never fails.
func htmlToText(src string, base *url.URL) (title, text string) {
	src = strings.ToValidUTF8(src, "\uFFFD")
	c := &htmlConv{base: base}
	for i := 0; i < len(src); {
		lt := strings.IndexByte(src[i:], '<')
		if lt < 0 {
			c.text(src[i:])
			break
		}
		c.text(src[i : i+lt])
		i += lt
		i = c.markup(src, i)
	}
	return strings.TrimSpace(collapseSpaces(c.title.String())), c.finish()
}

// htmlConv is the state of one conversion.
type htmlConv struct {
	base    *url.URL
	out     []byte
	title   strings.Builder
	inTitle bool
	pre     int  // depth of <pre>
	preLead bool // a newline right after <pre> is dropped
	lists   []string
	links   []linkStart
}

type linkStart struct {
	at   int // len(out) when the link opened
	href string
}

// Elements whose content is dropped whole.
var skipElements = map[string]bool{
	"script": true, "style": true, "noscript": true, "template": true, "svg": true,
	"math": true, "iframe": true, "object": true, "canvas": true, "head": true,
	"nav": true, "select": true, "button": true,
}

// Elements that break lines: block elements start and end on their own line.
var blockElements = map[string]bool{
	"p": true, "div": true, "section": true, "article": true, "main": true, "header": true,
	"footer": true, "aside": true, "blockquote": true, "figure": true, "figcaption": true,
	"table": true, "thead": true, "tbody": true, "tfoot": true, "tr": true, "ul": true, "ol": true,
	"dl": true, "dt": true, "dd": true, "li": true, "h1": true, "h2": true, "h3": true, "h4": true,
	"h5": true, "h6": true, "pre": true, "hr": true, "address": true, "details": true,
	"summary": true, "fieldset": true, "form": true, "caption": true, "body": true, "html": true,
}

// markup handles the tag, comment or declaration at src[i] == '<' and
// returns where the text after it starts.
func (c *htmlConv) markup(src string, i int) int {
	rest := src[i:]
	switch {
	case strings.HasPrefix(rest, "<!--"):
		if j := strings.Index(rest[4:], "-->"); j >= 0 {
			return i + 4 + j + 3
		}
		return len(src)
	case strings.HasPrefix(rest, "<!") || strings.HasPrefix(rest, "<?"):
		if j := strings.IndexByte(rest, '>'); j >= 0 {
			return i + j + 1
		}
		return len(src)
	}
	closing := strings.HasPrefix(rest, "</")
	nameAt := 1
	if closing {
		nameAt = 2
	}
	n := nameAt
	for n < len(rest) && isNameByte(rest[n]) {
		n++
	}
	if n == nameAt { // "<" not starting a tag is text
		c.text("<")
		return i + 1
	}
	name := strings.ToLower(rest[nameAt:n])
	end, attrs := tagEnd(rest, n)
	next := i + end
	if closing {
		c.close(name)
		return next
	}
	selfClosing := strings.HasSuffix(strings.TrimSpace(rest[:end-1]), "/")
	if skipElements[name] && !selfClosing {
		if name == "head" {
			// Keep the title: parse on inside the head, dropping the rest.
			if t := indexFold(src[next:], "<title"); t >= 0 {
				h := indexFold(src[next:], "</head")
				if h < 0 || t < h {
					tEnd, _ := tagEnd(src[next+t:], len("<title"))
					body := src[next+t+tEnd:]
					if e := indexFold(body, "</title"); e >= 0 {
						c.title.WriteString(html.UnescapeString(body[:e]))
					}
				}
			}
		}
		if j := indexFold(src[next:], "</"+name); j >= 0 {
			after := next + j
			if k := strings.IndexByte(src[after:], '>'); k >= 0 {
				return after + k + 1
			}
		}
		return len(src)
	}
	c.open(name, attrs)
	return next
}

func (c *htmlConv) open(name, attrs string) {
	switch {
	case name == "title":
		c.inTitle = true
	case name == "br":
		c.newline(1)
	case name == "hr":
		c.newline(2)
		c.write("---")
		c.newline(2)
	case len(name) == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6':
		c.newline(2)
		c.write(strings.Repeat("#", int(name[1]-'0')) + " ")
	case name == "pre":
		c.newline(2)
		c.write("```\n")
		c.pre++
		c.preLead = true
	case name == "ul" || name == "ol":
		c.newline(1)
		c.lists = append(c.lists, name)
	case name == "li":
		c.newline(1)
		depth := max(0, len(c.lists)-1)
		c.write(strings.Repeat("  ", depth) + "- ")
	case name == "td" || name == "th":
		if len(c.out) > 0 && c.out[len(c.out)-1] != '\n' {
			c.write(" | ")
		}
	case name == "code" || name == "kbd" || name == "samp" || name == "tt":
		if c.pre == 0 {
			c.space()
			c.write("`")
		}
	case name == "a":
		c.links = append(c.links, linkStart{at: len(c.out), href: c.resolveHref(attr(attrs, "href"))})
	case name == "img":
		if alt := strings.TrimSpace(attr(attrs, "alt")); alt != "" {
			c.text("[image: " + alt + "]")
		}
	case name == "p" || name == "blockquote" || name == "table" || name == "figure" || name == "dl":
		c.newline(2)
	case blockElements[name]:
		c.newline(1)
	}
}

func (c *htmlConv) close(name string) {
	switch {
	case name == "title":
		c.inTitle = false
	case name == "pre":
		if c.pre > 0 {
			c.pre--
			c.newline(1)
			c.write("```")
			c.newline(2)
		}
	case name == "ul" || name == "ol":
		if n := len(c.lists); n > 0 {
			c.lists = c.lists[:n-1]
		}
		c.newline(1)
	case name == "code" || name == "kbd" || name == "samp" || name == "tt":
		if c.pre == 0 {
			c.write("`")
		}
	case name == "a":
		if n := len(c.links); n > 0 {
			l := c.links[n-1]
			c.links = c.links[:n-1]
			if l.href != "" && l.at <= len(c.out) {
				if label := strings.TrimSpace(string(c.out[l.at:])); label != "" {
					c.out = append(c.out[:l.at], "["+label+"]("+l.href+")"...)
				}
			}
		}
	case len(name) == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6',
		name == "p", name == "blockquote", name == "table", name == "figure", name == "dl":
		c.newline(2)
	case blockElements[name]:
		c.newline(1)
	}
}

// text adds character data: entities decoded, whitespace collapsed outside
// <pre>.
func (c *htmlConv) text(s string) {
	if s == "" {
		return
	}
	s = html.UnescapeString(s)
	if c.inTitle {
		c.title.WriteString(s)
		return
	}
	if c.pre > 0 {
		if c.preLead {
			s = strings.TrimPrefix(strings.TrimPrefix(s, "\r"), "\n")
			c.preLead = false
		}
		c.write(s)
		return
	}
	lead := isSpace(s[0])
	trail := isSpace(s[len(s)-1])
	words := strings.Fields(s)
	if len(words) == 0 {
		if lead {
			c.space()
		}
		return
	}
	if lead {
		c.space()
	}
	c.write(strings.Join(words, " "))
	if trail {
		c.space()
	}
}

// space adds one space unless the output is at a line start or has one.
func (c *htmlConv) space() {
	if n := len(c.out); n > 0 && c.out[n-1] != ' ' && c.out[n-1] != '\n' {
		c.out = append(c.out, ' ')
	}
}

func (c *htmlConv) write(s string) { c.out = append(c.out, s...) }

// newline ends the output with at least n newlines (none at the very start).
func (c *htmlConv) newline(n int) {
	for len(c.out) > 0 && c.out[len(c.out)-1] == ' ' {
		c.out = c.out[:len(c.out)-1]
	}
	if len(c.out) == 0 {
		return
	}
	have := 0
	for i := len(c.out) - 1; i >= 0 && c.out[i] == '\n'; i-- {
		have++
	}
	for ; have < n; have++ {
		c.out = append(c.out, '\n')
	}
}

// finish trims trailing spaces of lines and collapses blank lines.
func (c *htmlConv) finish() string {
	var b strings.Builder
	blank := 0
	for line := range strings.SplitSeq(string(c.out), "\n") {
		line = strings.TrimRight(line, " \t")
		if line == "" {
			blank++
			continue
		}
		if b.Len() > 0 {
			if blank > 0 {
				b.WriteString("\n\n")
			} else {
				b.WriteByte('\n')
			}
		}
		blank = 0
		b.WriteString(line)
	}
	if b.Len() > 0 {
		b.WriteByte('\n')
	}
	return b.String()
}

func (c *htmlConv) resolveHref(href string) string {
	href = strings.TrimSpace(html.UnescapeString(href))
	if href == "" || strings.HasPrefix(href, "#") || strings.HasPrefix(strings.ToLower(href), "javascript:") {
		return ""
	}
	u, err := url.Parse(href)
	if err != nil {
		return ""
	}
	if c.base != nil {
		u = c.base.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "mailto" {
		return ""
	}
	return u.String()
}

// tagEnd finds the '>' ending the tag whose name ends at rest[n], skipping
// quoted attribute values; it returns the offset after it and the
// attribute text.
func tagEnd(rest string, n int) (int, string) {
	var quote byte
	for j := n; j < len(rest); j++ {
		ch := rest[j]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '"' || ch == '\'':
			quote = ch
		case ch == '>':
			return j + 1, rest[n:j]
		}
	}
	return len(rest), rest[n:]
}

// attr returns the value of attribute name in a tag's attribute text.
func attr(attrs, name string) string {
	for i := 0; i < len(attrs); {
		for i < len(attrs) && (isSpace(attrs[i]) || attrs[i] == '/') {
			i++
		}
		k := i
		for i < len(attrs) && !isSpace(attrs[i]) && attrs[i] != '=' && attrs[i] != '>' {
			i++
		}
		key := strings.ToLower(attrs[k:i])
		for i < len(attrs) && isSpace(attrs[i]) {
			i++
		}
		val := ""
		if i < len(attrs) && attrs[i] == '=' {
			i++
			for i < len(attrs) && isSpace(attrs[i]) {
				i++
			}
			if i < len(attrs) && (attrs[i] == '"' || attrs[i] == '\'') {
				q := attrs[i]
				e := strings.IndexByte(attrs[i+1:], q)
				if e < 0 {
					val, i = attrs[i+1:], len(attrs)
				} else {
					val, i = attrs[i+1:i+1+e], i+e+2
				}
			} else {
				v := i
				for i < len(attrs) && !isSpace(attrs[i]) {
					i++
				}
				val = attrs[v:i]
			}
		}
		if key == name {
			return val
		}
		if k == i {
			i++
		}
	}
	return ""
}

// indexFold is strings.Index ignoring ASCII case of sub (lower-case).
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

func isNameByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == ':'
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' }

// collapseSpaces joins the words of s with single spaces.
func collapseSpaces(s string) string { return strings.Join(strings.Fields(s), " ") }

// looksLikeHTML reports whether text seems to be an HTML document.
func looksLikeHTML(s string) bool {
	head := strings.ToLower(strings.TrimSpace(s[:min(len(s), 1024)]))
	return strings.HasPrefix(head, "<!doctype html") || strings.HasPrefix(head, "<html") || strings.Contains(head, "<head") || strings.Contains(head, "<body")
}
