package tools

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

const testPage = `<!DOCTYPE html>
<html><head><title>The  Guide</title>
<script>var x = "</div>"; alert(1)</script>
<style>body { color: red }</style></head>
<body>
<nav><a href="/home">Home</a> | <a href="/about">About</a></nav>
<h1>Getting started</h1>
<p>Install the <code>tool</code> with <a href="/install#top">the installer</a>
and run   it.</p>
<ul><li>one</li><li>two &amp; three</li></ul>
<pre>
func main() {
	fmt.Println("&lt;hi&gt;")
}
</pre>
<!-- a comment -->
<p>See <a href="https://example.org/x">x</a>.</p>
</body></html>`

func TestFetchURL(t *testing.T) {
	var requests []string
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, testPage)
	})
	mux.HandleFunc("/plain", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "just <b>text</b>\n")
	})
	mux.HandleFunc("/data.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"a": 1}`)
	})
	mux.HandleFunc("/image", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00"))
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "<h1>Not here</h1>")
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/plain", http.StatusFound)
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		line := strings.Repeat("z", 99) + "\n"
		for range (FetchBytes + 1_000_000) / 100 {
			if _, err := fmt.Fprint(w, line); err != nil {
				return
			}
		}
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests = append(requests, r.URL.Path)
		mux.ServeHTTP(w, r)
	}))
	defer srv.Close()

	root := workspace(t, nil)
	ap := &approver{}
	env := newEnv(t, root, ap)
	env.HTTP = srv.Client()

	res := run(t, env, "fetch_url", quoteArgs("url", srv.URL+"/page#section"))
	want := "URL: " + srv.URL + "/page\nStatus: 200 OK (text/html, " + sizeString(int64(len(testPage))) + ")\nTitle: The Guide\n\n" +
		"# Getting started\n\nInstall the `tool` with [the installer](" + srv.URL + "/install#top) and run it.\n\n- one\n- two & three\n\n" +
		"```\nfunc main() {\n\tfmt.Println(\"<hi>\")\n}\n```\n\nSee [x](https://example.org/x).\n"
	if res.IsError || res.Kind != ctxwin.KindFetch || res.Text != want {
		t.Errorf("html page:\n%s\nwant\n%s", res.Text, want)
	}
	if res.URL != srv.URL+"/page" || res.Summary != "Fetched "+srv.URL+"/page ("+sizeString(int64(len(testPage)))+")" {
		t.Errorf("URL %q summary %q", res.URL, res.Summary)
	}
	if a := ap.asked[0]; a.Kind != "fetch" || a.Tool != "fetch_url" || a.Detail != srv.URL+"/page" || a.Summary != "fetch "+srv.URL+"/page" {
		t.Errorf("approval %+v", a)
	}

	tests := []struct {
		path    string
		isErr   bool
		has     []string
		summary string
	}{
		{path: "/plain", has: []string{"Status: 200 OK (text/plain, 17 B)\n\njust <b>text</b>\n"}},
		{path: "/moved", has: []string{"URL: " + srv.URL + "/plain\n", "just <b>text</b>"}},
		{path: "/data.json", has: []string{`{"a": 1}`}},
		{path: "/image", isErr: true, has: []string{"is image/png (10 B), not text"}},
		{path: "/missing", isErr: true, has: []string{"Status: 404 Not Found", "# Not here"}, summary: "Fetched " + srv.URL + "/missing: 404 Not Found"},
	}
	for _, tt := range tests {
		res := run(t, env, "fetch_url", quoteArgs("url", srv.URL+tt.path))
		if res.IsError != tt.isErr {
			t.Errorf("%s: %+v", tt.path, res)
		}
		wantContains(t, tt.path, res.Text, tt.has...)
		if tt.summary != "" && res.Summary != tt.summary {
			t.Errorf("%s: summary %q", tt.path, res.Summary)
		}
	}

	// The size cap: only FetchBytes are read, the rest is dropped, the text
	// says so, and the long result is saved.
	res = run(t, env, "fetch_url", quoteArgs("url", srv.URL+"/huge"))
	if res.IsError || res.SavedTo == "" || res.Summary != "Fetched "+srv.URL+"/huge (5.2 MB)" {
		t.Fatalf("huge: %+v", res.Summary)
	}
	wantContains(t, "huge", res.Text, "[the page was cut: only its first 5.2 MB were read]")
	if saved := readFile(t, res.SavedTo); strings.Count(saved, strings.Repeat("z", 99)) != FetchBytes/100 || !strings.HasSuffix(saved, "were read]\n") {
		t.Errorf("saved file holds %d lines", strings.Count(saved, "\n"))
	}

	// Refused before asking and before any request.
	asked, sent := len(ap.asked), len(requests)
	for _, bad := range []string{"file:///etc/passwd", "ftp://example.org/x", "javascript:alert(1)", "http://", "//no-scheme", "::"} {
		res := run(t, env, "fetch_url", quoteArgs("url", bad))
		if !res.IsError {
			t.Errorf("%s: %+v", bad, res)
		}
	}
	if len(ap.asked) != asked || len(requests) != sent {
		t.Errorf("refused URLs asked %d times and sent %d requests", len(ap.asked)-asked, len(requests)-sent)
	}

	ap.decide = deny
	res = run(t, env, "fetch_url", quoteArgs("url", srv.URL+"/plain"))
	if !res.IsError || !strings.Contains(res.Text, "denied by the user") || len(requests) != sent {
		t.Errorf("denied: %+v", res)
	}
}

func TestFetchURLErrors(t *testing.T) {
	root := workspace(t, nil)
	env := newEnv(t, root, &approver{})
	env.HTTP = &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, errors.New("connection refused")
	})}
	res := run(t, env, "fetch_url", `{"url":"http://127.0.0.1:1/x"}`)
	if !res.IsError || !strings.Contains(res.Text, "cannot fetch http://127.0.0.1:1/x") || !strings.Contains(res.Text, "connection refused") {
		t.Errorf("%+v", res)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := fetchTool{}.Run(ctx, env, []byte(`{"url":"http://127.0.0.1:1/x"}`))
	if err != nil || !r.IsError || !strings.Contains(r.Text, "cancelled") {
		t.Errorf("cancelled: %+v %v", r, err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	return f(r)
}

// Pages become Markdown as html-to-markdown writes it (see htmltext.go),
// with what the model cannot use left out.
func TestHTMLToText(t *testing.T) {
	base, _ := url.Parse("https://example.com/docs/page.html")
	tests := []struct {
		name, html, title, text string
	}{
		{"entities", `<p>a &lt;b&gt; &amp; &quot;c&quot; &#39;d&#39; &#x263A;&nbsp;e</p>`, "", "a <b> & \"c\" 'd' ☺ e\n"},
		{"less-than stays itself", `<p>1 < 2 and 3 <= 4, List&lt;T&gt;, &amp;lt;</p>`, "", "1 < 2 and 3 <= 4, List<T>, &lt;\n"},
		{"uppercase tags", `<P>One<BR>Two</P><SCRIPT>hidden()</SCRIPT>`, "", "One  \nTwo\n"},
		{"nested lists", `<ul><li>a<ul><li>b</li></ul></li><li>c</li></ul><ol><li>x</li><li>y</li></ol>`, "", "- a\n  \n  - b\n- c\n\n<!--THE END-->\n\n1. x\n2. y\n"},
		{"links", `<a href="other.html">O</a> <a href="../up">U</a> <a href="#frag">F</a> <a href="javascript:x()">J</a> <a href="ftp://h/f">P</a> <a href="mailto:a@b.c">M</a> <a>N</a>`, "",
			"[O](https://example.com/docs/other.html) [U](https://example.com/up) F J P [M](mailto:a@b.c) N\n"},
		{"a link holding a link", `<a href="javascript:x()">a <a href="/b">b</a></a>`, "", "a [b](https://example.com/b)\n"},
		{"a link with only an image without a description", `<a href="/x"><img src="i.png"></a>text`, "", "text\n"},
		{"images", `<p><img src="a.png" alt="A diagram"> caption <img src="data:image/png;base64,AAAA" alt="inline"> <img src="b.png"></p>`, "",
			"![A diagram](https://example.com/docs/a.png) caption\n"},
		{"table", `<table><tr><th>key</th><th>v</th></tr><tr><td>a</td><td>1</td></tr><tr><td></td><td></td></tr></table>`, "", "| key | v |\n|---|---|\n| a | 1 |\n"},
		{"headings", `<h2>Two</h2><p>x</p><h3>Three</h3>`, "", "## Two\n\nx\n\n### Three\n"},
		{"emphasis and quotes", `<p><b>bold</b> <em>it</em></p><blockquote><p>said</p></blockquote>`, "", "**bold** *it*\n\n> said\n"},
		{"Markdown in the text is escaped", `<p>*not emphasis* and 1. not a list</p>`, "", "\\*not emphasis* and 1. not a list\n"},
		{"title without head", `<title>T &amp; U</title><p>x</p>`, "T & U", "x\n"},
		{"head with title", `<html><head><meta charset="utf-8"><title>Doc</title><link rel="x"></head><body>B</body></html>`, "Doc", "B\n"},
		{"an SVG's title is not the page's", `<body><svg><title>icon</title></svg><p>x</p></body>`, "", "x\n"},
		{"navigation, controls and drawings", `<nav><a href="/">Home</a></nav><p>body</p><button>Click</button><select><option>o</option></select><svg><text>t</text></svg>`, "", "body\n"},
		{"unclosed script", `<p>a</p><script>never closed`, "", "a\n"},
		{"unterminated comment", `<p>a</p><!-- never`, "", "a\n"},
		{"a stray quote in a tag", `<div "=""><div>Lorem ipsum</div></div>`, "", "Lorem ipsum\n"},
		{"attribute with >", `<a title="a>b" href="/q">link</a>`, "", "[link](https://example.com/q \"a>b\")\n"},
		{"blank lines collapse", `<div><p>a</p><p></p><p></p><p>b</p></div>`, "", "a\n\nb\n"},
		{"invalid utf8", "<p>a\xffb</p>", "", "a\uFFFDb\n"},
		{"noncharacters", "<p>a\uFDD0b\uFDD1c</p>", "", "a\uFFFDb\uFFFDc\n"},
		{"inline code", `<p>call <code>f(x) &lt; y</code>.</p>`, "", "call `f(x) < y`.\n"},
		{"code block keeps its blank lines", "<pre><code>a\n\n\nb &lt; c\n</code></pre>", "", "```\na\n\n\nb < c\n```\n"},
		{"hr", `<p>a</p><hr><p>b</p>`, "", "a\n\n* * *\n\nb\n"},
		{"plain text", `no markup at all`, "", "no markup at all\n"},
		{"nothing", `<p> </p>`, "", ""},
	}
	for _, tt := range tests {
		title, text, err := htmlToText(tt.html, base)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if title != tt.title || text != tt.text {
			t.Errorf("%s: got title %q text %q, want %q %q", tt.name, title, text, tt.title, tt.text)
		}
	}
}
