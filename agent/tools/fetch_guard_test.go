package tools

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
)

func TestAddrRefused(t *testing.T) {
	for addr, refused := range map[string]bool{
		"127.0.0.1": false, "::1": false, "8.8.8.8": false, "2001:4860:4860::8888": false, "0.0.0.0": false,
		"169.254.169.254": true, "fe80::1": true, "fd00:ec2::254": true, "10.1.2.3": true, "172.16.0.1": true,
		"192.168.1.1": true, "100.64.0.1": true, "100.100.100.200": true, "::ffff:169.254.169.254": true,
		"64:ff9b::a9fe:a9fe": true, "224.0.0.1": true, "255.255.255.255": true,
	} {
		if got := addrRefused(netip.MustParseAddr(addr)) != ""; got != refused {
			t.Errorf("%s: refused %v, want %v", addr, got, refused)
		}
	}
	env := &Env{}
	for _, h := range []string{"http://metadata.google.internal/computeMetadata/v1/", "http://METADATA./", "http://[fd00:ec2::254]/"} {
		u, _ := url.Parse(h)
		if env.hostRefused(u) == "" {
			t.Errorf("%s is not refused", h)
		}
	}
	env.FetchAllowHosts = []string{"169.254.169.254", "metadata"}
	for _, h := range []string{"http://169.254.169.254/", "http://metadata/"} {
		u, _ := url.Parse(h)
		if why := env.hostRefused(u); why != "" {
			t.Errorf("%s, allowed, is refused: %s", h, why)
		}
	}
}

// safeDialer dials 127.0.0.1 only, and records every other address it
// was asked for: a test never connects elsewhere, whatever the code under
// test does.
type safeDialer struct {
	mu    sync.Mutex
	other []string
}

func (d *safeDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if host, _, _ := net.SplitHostPort(addr); host != "127.0.0.1" {
		d.mu.Lock()
		d.other = append(d.other, addr)
		d.mu.Unlock()
		return nil, errors.New("the test dials 127.0.0.1 only")
	}
	return (&net.Dialer{}).DialContext(ctx, network, addr)
}

// A redirect to the cloud metadata address is refused by the check of
// the hop, before anything is dialed, and the result says which hop and
// why.
func TestFetchRedirectToMetadataRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/meta":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/twice":
			http.Redirect(w, r, "/meta", http.StatusFound)
		case "/google":
			http.Redirect(w, r, "http://metadata.google.internal/computeMetadata/v1/", http.StatusFound)
		}
	}))
	defer srv.Close()
	root := workspace(t, nil)
	for path, want := range map[string]string{
		"/meta":   "fetch_url refused redirect 1, from " + srv.URL + "/meta to http://169.254.169.254/latest/meta-data/: 169.254.169.254 is a link-local address",
		"/twice":  "fetch_url refused redirect 2, from " + srv.URL + "/meta to http://169.254.169.254/latest/meta-data/: 169.254.169.254 is a link-local address",
		"/google": "fetch_url refused redirect 1, from " + srv.URL + "/google to http://metadata.google.internal/computeMetadata/v1/: metadata.google.internal is a cloud metadata service",
	} {
		d := &safeDialer{}
		env := newEnv(t, root, &approver{})
		env.HTTP = &http.Client{Transport: &http.Transport{DialContext: d.dial}}
		res := run(t, env, "fetch_url", quoteArgs("url", srv.URL+path))
		if !res.IsError || !strings.Contains(res.Text, want) {
			t.Errorf("%s: %+v\nwant %q", path, res, want)
		}
		if len(d.other) > 0 {
			t.Errorf("%s: dialed %v", path, d.other)
		}
	}
}

// The URL asked for is checked too, before the user is asked.
func TestFetchMetadataURLRefused(t *testing.T) {
	ap := &approver{}
	env := newEnv(t, workspace(t, nil), ap)
	res := run(t, env, "fetch_url", quoteArgs("url", "http://[fe80::1%25eth0]:8080/x"))
	if !res.IsError || !strings.Contains(res.Text, "fetch_url refused http://[fe80::1%25eth0]:8080/x: fe80::1%eth0 is a link-local address") || len(ap.asked) != 0 {
		t.Errorf("%+v, asked %d", res, len(ap.asked))
	}
}

// The address a dial resolves to is checked before the connection: the
// guard of the default transport refuses a private address (a name
// resolving to it meets the same check, which sees addresses only).
func TestFetchDialGuard(t *testing.T) {
	env := &Env{}
	c := env.guardedClient(http.DefaultClient)
	_, err := c.Get("http://10.255.255.1:9/")
	var d *dialRefused
	if !errors.As(err, &d) || d.addr != "10.255.255.1" {
		t.Errorf("%v", err)
	}
	// Loopback is allowed.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	defer srv.Close()
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}
