package tools

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/approval"
)

// TestFetchRedirectToAnotherHostAsksAgain follows a redirect on the same
// host without asking, and asks before one to another host: denied, the
// other host is never reached.
func TestFetchRedirectToAnotherHostAsksAgain(t *testing.T) {
	reached := 0
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached++
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "the other host")
	}))
	defer other.Close()
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/page", http.StatusFound)
		case "/here":
			http.Redirect(w, r, "/page", http.StatusFound)
		default:
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "the first host")
		}
	}))
	defer first.Close()
	root := workspace(t, nil)

	ap := &approver{}
	env := newEnv(t, root, ap)
	res := run(t, env, "fetch_url", quoteArgs("url", first.URL+"/here"))
	if res.IsError || !strings.Contains(res.Text, "the first host") || len(ap.asked) != 1 {
		t.Errorf("a redirect on the same host: %+v, asked %d", res, len(ap.asked))
	}

	ap = &approver{decide: func(a approval.Request) bool { return !strings.Contains(a.Summary, "redirect") }}
	env = newEnv(t, root, ap)
	res = run(t, env, "fetch_url", quoteArgs("url", first.URL+"/away"))
	if !res.IsError || !strings.Contains(res.Text, "redirected to "+other.URL+"/page, another host, and fetching that was denied") || reached != 0 {
		t.Errorf("a denied redirect: %+v, reached %d", res, reached)
	}
	if len(ap.asked) != 2 || ap.asked[1].Kind != "fetch" || ap.asked[1].Detail != other.URL+"/page" {
		t.Errorf("asked %+v", ap.asked)
	}

	env = newEnv(t, root, &approver{})
	if res := run(t, env, "fetch_url", quoteArgs("url", first.URL+"/away")); res.IsError || !strings.Contains(res.Text, "the other host") {
		t.Errorf("an allowed redirect: %+v", res)
	}
}
