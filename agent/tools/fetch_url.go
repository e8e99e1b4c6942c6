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

const fetchUsage = `{"url": string}`

func (fetchTool) Spec() ctxwin.ToolSpec {
	return ctxwin.ToolSpec{Name: NameFetchURL, Description: strings.TrimSpace(fetchDescription), Parameters: []byte(`{"type":"object","properties":{"url":{"type":"string","description":"The http or https URL to fetch."}},"required":["url"],"additionalProperties":false}`)}
}

func (fetchTool) Run(ctx context.Context, env *Env, raw json.RawMessage) (ctxwin.Result, error) {
	a := parseArgs(raw, fetchUsage)
	rawURL := strings.TrimSpace(a.str("url", true))
	if a.err != nil {
		return errResult(ctxwin.KindFetch, "%v", a.err), nil
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return errResult(ctxwin.KindFetch, "invalid URL %q: %v", rawURL, err), nil
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errResult(ctxwin.KindFetch, "only http and https URLs can be fetched, not %q", rawURL), nil
	}
	if u.Host == "" {
		return errResult(ctxwin.KindFetch, "the URL %q has no host", rawURL), nil
	}
	u.Fragment = ""
	target := u.String()
	if !env.approve(ctx, Approval{Tool: NameFetchURL, Kind: "fetch", Summary: "fetch " + target, Detail: target}) {
		return errResult(ctxwin.KindFetch, "fetching %s was denied by the user", target), nil
	}

	fctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(fctx, http.MethodGet, target, nil)
	if err != nil {
		return errResult(ctxwin.KindFetch, "invalid URL %q: %v", rawURL, err), nil
	}
	req.Header.Set("User-Agent", "reika-lsp (coding agent; fetch_url tool)")
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain,text/markdown,application/json;q=0.9,*/*;q=0.5")
	client := env.redirectAsks(ctx, u)
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return errResult(ctxwin.KindFetch, "fetching %s was cancelled", target), nil
		}
		var denied *redirectDenied
		if errors.As(err, &denied) {
			return errResult(ctxwin.KindFetch, "%s redirected to %s, another host, and fetching that was denied by the user", denied.from, denied.to), nil
		}
		return errResult(ctxwin.KindFetch, "cannot fetch %s: %v", target, err), nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, FetchBytes+1))
	if err != nil && len(body) == 0 {
		return errResult(ctxwin.KindFetch, "cannot read %s: %v", target, err), nil
	}
	cut := len(body) > FetchBytes
	if cut {
		body = body[:FetchBytes]
	}
	final := resp.Request.URL
	ctype := resp.Header.Get("Content-Type")
	if ctype == "" {
		ctype = http.DetectContentType(body)
	}
	mt, _, _ := mime.ParseMediaType(ctype)
	if !textual(mt) {
		return errResult(ctxwin.KindFetch, "%s is %s (%s), not text; fetch_url returns text only", final, mt, sizeString(int64(len(body)))), nil
	}

	var header strings.Builder
	fmt.Fprintf(&header, "URL: %s\n", final)
	fmt.Fprintf(&header, "Status: %s (%s, %s)\n", resp.Status, mt, sizeString(int64(len(body))))
	text := string(body)
	if mt == "text/html" || mt == "application/xhtml+xml" || (mt == "text/plain" && looksLikeHTML(text)) {
		var title string
		if title, text, err = htmlToText(text, final); err != nil {
			return errResult(ctxwin.KindFetch, "%s: %v", final, err), nil
		}
		if title != "" {
			fmt.Fprintf(&header, "Title: %s\n", title)
		}
	} else {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	header.WriteString("\n")
	out := newOutput(env, "fetch")
	out.WriteString(header.String())
	out.WriteString(text)
	if cut {
		fmt.Fprintf(out, "\n[the page was cut: only its first %s were read]\n", sizeString(FetchBytes))
	}
	full, saved := out.finish()
	res := ctxwin.Result{
		Kind:    ctxwin.KindFetch,
		Text:    full,
		Summary: fmt.Sprintf("Fetched %s (%s)", final, sizeString(int64(len(body)))),
		SavedTo: saved,
		URL:     final.String(),
	}
	if resp.StatusCode >= 400 {
		res.IsError = true
		res.Summary = fmt.Sprintf("Fetched %s: %s", final, resp.Status)
	}
	return res, nil
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

// redirectAsks is env's HTTP client, made to ask again before it follows
// a redirect to a host other than the one approved (the user approved a
// fetch of approved's host, not of wherever it sends them).
func (env *Env) redirectAsks(ctx context.Context, approved *url.URL) *http.Client {
	base := env.HTTP
	if base == nil {
		base = http.DefaultClient
	}
	c := *base
	host := hostKey(approved)
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return fmt.Errorf("a redirect to %s, which is not http or https", req.URL.Redacted())
		}
		if k := hostKey(req.URL); k != host && !upgrade(host, k) {
			from, to := via[len(via)-1].URL.Redacted(), req.URL.Redacted()
			if !env.approve(ctx, Approval{Tool: NameFetchURL, Kind: "fetch", Summary: "fetch " + to + " (a redirect from " + from + ")", Detail: to}) {
				return &redirectDenied{from: from, to: to}
			}
			host = k
		}
		if base.CheckRedirect != nil {
			return base.CheckRedirect(req, via)
		}
		return nil
	}
	return &c
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
