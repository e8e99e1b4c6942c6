package tools

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// fetch_url hands the model a page as Markdown, parsed by x/net/html (the
// HTML5 parsing algorithm browsers use) and written by html-to-markdown
// (CommonMark with GitHub's tables). They replace a tokenizer of our own
// that read less of real pages: on the 130 saved web pages of Mozilla
// Readability's test suite, ours kept 88.5% of the words of each page's
// article, html-to-markdown 94.8%; ours lost whole pages to markup it
// misread (a stray quote in a tag, <div "="">, swallowed the rest). The
// library is about 7 times slower and allocates 3 to 6 times more
// (BenchmarkHTMLToText, the 300 KB Go specification: 34 ms and 12 MB
// against 5 ms and 3.6 MB; the 130 pages: 4.5 ms a page against 1.3 ms),
// which is little next to fetching the page, once per fetch.

// htmlDropped are elements whose content is no use to the model, beyond
// those the library drops (head, script, style, iframe, noscript, forms'
// inputs and comments): navigation, drawings and controls.
// The title is dropped too, having come apart.
var htmlDropped = []string{"nav", "svg", "math", "canvas", "object", "template", "select", "button", "title"}

// The sentinels that keep < and > as they are: the library writes them as
// &lt; and &gt; outside code, which the model reads as noise. They are
// Unicode noncharacters, which no page holds (any that does has them
// replaced).
const (
	ltSentinel = '\uFDD0'
	gtSentinel = '\uFDD1'
)

// textSentinels puts the sentinels in place of < and > in the page's text
// (and a space for a no-break space).
var textSentinels = strings.NewReplacer("<", string(ltSentinel), ">", string(gtSentinel), "\u00a0", " ")

var markdownConverter = sync.OnceValue(func() *converter.Converter {
	conv := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(
			commonmark.WithLinkEmptyHrefBehavior(commonmark.LinkBehaviorSkip),
			commonmark.WithLinkEmptyContentBehavior(commonmark.LinkBehaviorSkip),
		),
		table.NewTablePlugin(
			table.WithCellPaddingBehavior(table.CellPaddingBehaviorMinimal),
			table.WithSkipEmptyRows(true),
		),
	))
	for _, tag := range htmlDropped {
		conv.Register.TagType(tag, converter.TagTypeRemove, converter.PriorityStandard)
	}
	conv.Register.PreRenderer(pruneLinksAndImages, converter.PriorityEarly)
	conv.Register.TextTransformer(func(_ converter.Context, s string) string {
		return textSentinels.Replace(s)
	}, converter.PriorityEarly)
	conv.Register.PostRenderer(func(_ converter.Context, b []byte) []byte {
		b = bytes.ReplaceAll(b, []byte(string(ltSentinel)), []byte("<"))
		return bytes.ReplaceAll(b, []byte(string(gtSentinel)), []byte(">"))
	}, converter.PriorityLate)
	return conv
})

// htmlToText turns an HTML page into Markdown: headings as #, lists as -,
// links as [text](url) resolved against base (http, https and mailto
// only), images with a description as ![alt](url), tables, code spans and
// fenced code blocks. The page's title comes apart. It never fails on bad
// HTML: any byte string is a page (invalid UTF-8 is replaced).
func htmlToText(src string, base *url.URL) (title, text string, err error) {
	src = strings.ToValidUTF8(src, "\uFFFD")
	src = strings.NewReplacer(string(ltSentinel), "\uFFFD", string(gtSentinel), "\uFFFD").Replace(src)
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		return "", "", fmt.Errorf("cannot parse the page: %w", err)
	}
	title = pageTitle(doc)
	md, err := markdownConverter().ConvertNode(doc, converter.WithDomain(base.String()))
	if err != nil {
		return title, "", fmt.Errorf("cannot turn the page into Markdown: %w", err)
	}
	md = bytes.TrimSpace(md)
	if len(md) == 0 {
		return title, "", nil
	}
	return title, string(md) + "\n", nil
}

// pageTitle is the text of the document's <title> (not an SVG's), with its
// spaces collapsed.
func pageTitle(n *html.Node) string {
	if n.Type == html.ElementNode && n.DataAtom == atom.Title && n.Namespace == "" {
		var b strings.Builder
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			}
		}
		return strings.Join(strings.Fields(b.String()), " ")
	}
	if n.Type == html.ElementNode && n.Namespace != "" {
		return ""
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if t := pageTitle(c); t != "" {
			return t
		}
	}
	return ""
}

// pruneLinksAndImages keeps the links the model can follow and the images
// it can learn something of: a link to anything but an http, https or
// mailto URL elsewhere than this page (a #fragment, javascript:) keeps
// only its text, and an image without a description or inlined as a data:
// URL is dropped.
func pruneLinksAndImages(ctx converter.Context, doc *html.Node) {
	base, _ := url.Parse(converter.GetDomain(ctx))
	var unwrap, drop []*html.Node
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.A:
				if href := followable(base, attrOf(n, "href")); href != "" {
					setAttr(n, "href", href)
				} else {
					unwrap = append(unwrap, n)
				}
			case atom.Img:
				src := strings.TrimSpace(attrOf(n, "src"))
				if strings.TrimSpace(attrOf(n, "alt")) == "" || strings.HasPrefix(strings.ToLower(src), "data:") {
					drop = append(drop, n)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	for _, n := range drop {
		n.Parent.RemoveChild(n)
	}
	// An unfollowable link gives way to its content, innermost first.
	for i := len(unwrap) - 1; i >= 0; i-- {
		n := unwrap[i]
		for c := n.FirstChild; c != nil; c = n.FirstChild {
			n.RemoveChild(c)
			n.Parent.InsertBefore(c, n)
		}
		n.Parent.RemoveChild(n)
	}
}

// followable is href resolved against base when it leads somewhere the
// model can fetch or name (http, https, mailto) other than the page
// itself; "" otherwise.
func followable(base *url.URL, href string) string {
	href = strings.TrimSpace(href)
	if href == "" || strings.HasPrefix(href, "#") {
		return ""
	}
	u, err := url.Parse(href)
	if err != nil {
		return ""
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	switch u.Scheme {
	case "http", "https", "mailto":
		return u.String()
	}
	return ""
}

func attrOf(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val
		}
	}
	return ""
}

func setAttr(n *html.Node, key, val string) {
	for i, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			n.Attr[i].Val = val
			return
		}
	}
	n.Attr = append(n.Attr, html.Attribute{Key: key, Val: val})
}

// looksLikeHTML reports whether text seems to be an HTML document.
func looksLikeHTML(s string) bool {
	head := strings.ToLower(strings.TrimSpace(s[:min(len(s), 1024)]))
	return strings.HasPrefix(head, "<!doctype html") || strings.HasPrefix(head, "<html") || strings.Contains(head, "<head") || strings.Contains(head, "<body")
}
