package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/reika-lsp/reika-lsp/agent/approval"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

//go:embed fetch_url.md
var fetchDescription string

// Fetch limits: at most FetchBytes of a body are read; a fetch is abandoned
// after FetchTimeout.
const (
	FetchBytes   = 5 << 20
	FetchTimeout = 60 * time.Second
)

type fetchTool struct{}

// fetchParams are fetch_url's parameters (params.go).
type fetchParams struct {
	URL string `json:"url" jsonschema:"The http or https URL to fetch."`
}

var fetchDecl = Declare[fetchParams]()

func (fetchTool) Spec() ctxwin.ToolSpec {
	return fetchDecl.Spec(NameFetchURL, strings.TrimSpace(fetchDescription))
}

// Run fetches one http(s) URL, once the user approves it (and again any
// redirect to another host), and returns its text: HTML turned into text,
// other text as it is, under a header of the final URL, the status and the
// title. Anything that goes wrong is an error result, never an error.
func (fetchTool) Run(ctx context.Context, env *Env, raw json.RawMessage) (ctxwin.Result, error) {
	rawURL, u, err := fetchArgs(raw)
	if err != nil {
		return errResult(ctxwin.KindFetch, "%v", err), nil
	}
	target := u.String()
	if why := env.hostRefused(u); why != "" {
		return errResult(ctxwin.KindFetch, "%v", &hopRefused{to: u.Redacted(), why: why}), nil
	}
	if !env.approve(ctx, approval.Request{Tool: NameFetchURL, Kind: "fetch", Summary: "fetch " + target, Detail: target}) {
		return errResult(ctxwin.KindFetch, "fetching %s was denied by the user", target), nil
	}
	page, err := env.fetchPage(ctx, rawURL, u)
	if err != nil {
		return errResult(ctxwin.KindFetch, "%v", err), nil
	}
	return page.result(env), nil
}

// fetchArgs parses the fetch tool's arguments: the URL as given, and
// parsed, without its fragment. The error, the tool's error text, says why
// the URL cannot be fetched.
func fetchArgs(raw json.RawMessage) (rawURL string, u *url.URL, err error) {
	p, err := fetchDecl.Decode(raw)
	if err != nil {
		return "", nil, err
	}
	rawURL = strings.TrimSpace(p.URL)
	u, err = url.Parse(rawURL)
	if err != nil {
		return "", nil, fmt.Errorf("invalid URL %q: %w", rawURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", nil, fmt.Errorf("only http and https URLs can be fetched, not %q", rawURL)
	}
	if u.Host == "" {
		return "", nil, fmt.Errorf("the URL %q has no host", rawURL)
	}
	u.Fragment = ""
	return rawURL, u, nil
}

// fetchedPage is a response read whole (its body closed).
type fetchedPage struct {
	resp *http.Response
	body []byte // at most FetchBytes
	cut  bool   // the body was longer than FetchBytes
}

// fetchPage GETs u (approved; rawURL is how the model wrote it) within
// FetchTimeout, asking before a redirect to another host, and reads at
// most FetchBytes of the body. The error, the tool's error text, says why
// there is no page: cancelled, a redirect denied, no answer, no body.
func (env *Env) fetchPage(ctx context.Context, rawURL string, u *url.URL) (fetchedPage, error) {
	target := u.String()
	fctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(fctx, http.MethodGet, target, nil)
	if err != nil {
		return fetchedPage{}, fmt.Errorf("invalid URL %q: %w", rawURL, err)
	}
	req.Header.Set("User-Agent", "reika-lsp (coding agent; fetch_url tool)")
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain,text/markdown,application/json;q=0.9,*/*;q=0.5")
	client, hops := env.redirectAsks(ctx, u)
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fetchedPage{}, fmt.Errorf("fetching %s was cancelled", target)
		}
		var refused *hopRefused
		if errors.As(hops.refused(err), &refused) {
			return fetchedPage{}, refused
		}
		var denied *redirectDenied
		if errors.As(err, &denied) {
			return fetchedPage{}, fmt.Errorf("%s redirected to %s, another host, and fetching that was denied by the user", denied.from, denied.to)
		}
		return fetchedPage{}, fmt.Errorf("cannot fetch %s: %w", target, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, FetchBytes+1))
	if err != nil && len(body) == 0 {
		return fetchedPage{}, fmt.Errorf("cannot read %s: %w", target, err)
	}
	cut := len(body) > FetchBytes
	if cut {
		body = body[:FetchBytes]
	}
	return fetchedPage{resp: resp, body: body, cut: cut}, nil
}

// result is the fetch tool's result for p: an error for a body that is not
// text (by its Content-Type, else by sniffing) or HTML that cannot be
// parsed; an error result too, with the text, for a status of 400 or more.
func (p fetchedPage) result(env *Env) ctxwin.Result {
	final := p.resp.Request.URL
	ctype := p.resp.Header.Get("Content-Type")
	if ctype == "" {
		ctype = http.DetectContentType(p.body)
	}
	mt, _, _ := mime.ParseMediaType(ctype)
	size := sizeString(int64(len(p.body)))
	if !textual(mt) {
		return errResult(ctxwin.KindFetch, "%s is %s (%s), not text; fetch_url returns text only", final, mt, size)
	}
	var header strings.Builder
	fmt.Fprintf(&header, "URL: %s\n", final)
	fmt.Fprintf(&header, "Status: %s (%s, %s)\n", p.resp.Status, mt, size)
	text := string(p.body)
	if mt == "text/html" || mt == "application/xhtml+xml" || (mt == "text/plain" && looksLikeHTML(text)) {
		title, t, err := htmlToText(text, final)
		if err != nil {
			return errResult(ctxwin.KindFetch, "%s: %v", final, err)
		}
		if title != "" {
			fmt.Fprintf(&header, "Title: %s\n", title)
		}
		text = t
	} else {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	header.WriteString("\n")
	out := newOutput(env, "fetch")
	out.WriteString(header.String())
	out.WriteString(text)
	if p.cut {
		fmt.Fprintf(out, "\n[the page was cut: only its first %s were read]\n", sizeString(FetchBytes))
	}
	full, saved := out.finish()
	res := ctxwin.Result{
		Kind:    ctxwin.KindFetch,
		Text:    full,
		Summary: fmt.Sprintf("Fetched %s (%s)", final, size),
		SavedTo: saved,
		URL:     final.String(),
	}
	if p.resp.StatusCode >= 400 {
		res.IsError = true
		res.Summary = fmt.Sprintf("Fetched %s: %s", final, p.resp.Status)
	}
	return res
}

// textual reports whether a media type is text fetch_url can return.
func textual(mt string) bool {
	switch {
	case strings.HasPrefix(mt, "text/"):
		return true
	case strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/javascript", "application/x-javascript",
		"application/ecmascript", "application/x-yaml", "application/yaml", "application/toml",
		"application/x-sh", "application/sql", "application/graphql", "application/xhtml+xml":
		return true
	}
	return false
}

// maxRedirects bounds the redirects one fetch follows.
const maxRedirects = 10

// redirectDenied is a redirect to another host the user did not allow.
type redirectDenied struct{ from, to string }

func (e *redirectDenied) Error() string { return "the redirect to " + e.to + " was denied" }

// redirectAsks is env's HTTP client, made to check every redirect by the
// rules of the first URL (fetch_guard.go) and every address it dials, and
// to ask again before it follows a redirect to a host other than the one
// approved (the user approved a fetch of approved's host, not of wherever
// it sends them). hops follows where the fetch is.
func (env *Env) redirectAsks(ctx context.Context, approved *url.URL) (*http.Client, *hops) {
	base := env.HTTP
	if base == nil {
		base = http.DefaultClient
	}
	c := env.guardedClient(base)
	h := &hops{to: approved}
	host := hostKey(approved)
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return fmt.Errorf("a redirect to %s, which is not http or https", req.URL.Redacted())
		}
		if why := env.hostRefused(req.URL); why != "" {
			return &hopRefused{hop: len(via), from: via[len(via)-1].URL.Redacted(), to: req.URL.Redacted(), why: why}
		}
		if k := hostKey(req.URL); k != host && !upgrade(host, k) {
			from, to := via[len(via)-1].URL.Redacted(), req.URL.Redacted()
			if !env.approve(ctx, approval.Request{Tool: NameFetchURL, Kind: "fetch", Summary: "fetch " + to + " (a redirect from " + from + ")", Detail: to}) {
				return &redirectDenied{from: from, to: to}
			}
			host = k
		}
		if base.CheckRedirect != nil {
			if err := base.CheckRedirect(req, via); err != nil {
				return err
			}
		}
		h.n, h.from, h.to = len(via), via[len(via)-1].URL, req.URL
		return nil
	}
	return c, h
}

// hostKey is a URL's host with its port, the default port of the scheme
// made explicit, lowercased.
func hostKey(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return strings.ToLower(u.Hostname()) + ":" + port
}

// upgrade reports whether to is from's host moved from http to https (the
// default ports of both), which is the same host.
func upgrade(from, to string) bool {
	h, ok := strings.CutSuffix(from, ":80")
	return ok && to == h+":443"
}
