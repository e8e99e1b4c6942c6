package tools

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"
)

// What fetch_url may reach. Every hop — the URL asked for and each
// redirect — is checked before it is requested, and the address a name
// resolves to is checked again when it is dialed (a name may resolve to a
// private address), so nothing refused is ever connected to:
//
//   - cloud metadata names (metadata.google.internal and the like) are
//     refused;
//   - link-local addresses (169.254.0.0/16, where cloud metadata services
//     answer, and fe80::/10), private ranges (10/8, 172.16/12,
//     192.168/16, fc00::/7, which holds fd00:ec2::254), shared CGNAT
//     space (100.64.0.0/10) and multicast or broadcast are refused;
//   - loopback stays allowed, for local development servers;
//   - a host in Env.FetchAllowHosts (by name or address) is allowed
//     whatever it resolves to.

// metadataHosts are names of cloud metadata services.
var metadataHosts = map[string]bool{
	"metadata":                     true,
	"metadata.google.internal":     true,
	"metadata.goog":                true,
	"instance-data":                true,
	"instance-data.ec2.internal":   true,
	"metadata.azure.internal":      true,
	"metadata.tencentyun.com":      true,
	"metadata.platformequinix.com": true,
}

var cgnat = netip.MustParsePrefix("100.64.0.0/10")
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// addrRefused says why fetch_url may not connect to ip, or "".
func addrRefused(ip netip.Addr) string {
	ip = ip.Unmap()
	if nat64.Contains(ip) {
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte(b[12:]))
	}
	switch {
	case ip.IsLoopback(), ip.IsUnspecified():
		return ""
	case ip.IsLinkLocalUnicast():
		return "a link-local address, where cloud metadata services answer"
	case ip.IsPrivate():
		return "a private network address"
	case cgnat.Contains(ip):
		return "a shared (carrier-grade NAT) address"
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast(), ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "not the address of one host"
	}
	return ""
}

// hostRefused says why fetch_url may not fetch from u's host, by its name
// or literal address, or "".
func (env *Env) hostRefused(u *url.URL) string {
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if env.fetchAllowed(host) {
		return ""
	}
	if metadataHosts[host] {
		return host + " is a cloud metadata service"
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if why := addrRefused(ip); why != "" {
			return host + " is " + why
		}
	}
	return ""
}

func (env *Env) fetchAllowed(host string) bool {
	host = strings.TrimSuffix(strings.Trim(strings.ToLower(host), "[]"), ".")
	for _, h := range env.FetchAllowHosts {
		if strings.TrimSuffix(strings.Trim(strings.ToLower(h), "[]"), ".") == host {
			return true
		}
	}
	return false
}

// hopRefused is a hop of a fetch the rules above refuse.
type hopRefused struct {
	hop      int    // 0: the URL asked for; n: the nth redirect
	from, to string // the hop's URLs (from is "" for the first)
	why      string
}

func (e *hopRefused) Error() string {
	what := e.to
	if e.hop > 0 {
		what = fmt.Sprintf("redirect %d, from %s to %s", e.hop, e.from, e.to)
	}
	return fmt.Sprintf("fetch_url refused %s: %s. It does not reach cloud metadata services, link-local or private "+
		"addresses (loopback is allowed; the fetchAllowHosts setting allows a host).", what, e.why)
}

// hops follows the hops of one fetch, for the error of a refused dial.
type hops struct {
	n        int
	from, to *url.URL
}

// dialRefused is a dial of an address the rules refuse.
type dialRefused struct{ addr, why string }

func (e *dialRefused) Error() string { return e.addr + " is " + e.why }

// guardTransport returns t's clone whose dials check the address dialed
// (after name resolution) unless the host dialed is allowed: an allowed
// host, or the proxy t sends requests through.
func (env *Env) guardTransport(t *http.Transport) *http.Transport {
	isDefault := t == http.DefaultTransport
	t = t.Clone()
	var proxies sync.Map // "host:port" of proxies in use
	if p := t.Proxy; p != nil {
		t.Proxy = func(r *http.Request) (*url.URL, error) {
			u, err := p(r)
			if u != nil {
				k := hostKey(u)
				proxies.Store(net.JoinHostPort(strings.ToLower(u.Hostname()), k[strings.LastIndexByte(k, ':')+1:]), true)
			}
			return u, err
		}
	}
	guarded := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			ip, err := netip.ParseAddr(host)
			if err != nil {
				return fmt.Errorf("dialing %s: not an address", address)
			}
			if why := addrRefused(ip); why != "" {
				return &dialRefused{addr: host, why: why}
			}
			return nil
		}}
	plain := (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	check := guarded.DialContext
	if !isDefault && t.DialContext != nil {
		// A dialer of the caller's own (tests): literal addresses are
		// checked before it is called.
		plain = t.DialContext
		check = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if host, _, err := net.SplitHostPort(addr); err == nil {
				if ip, err := netip.ParseAddr(host); err == nil {
					if why := addrRefused(ip); why != "" {
						return nil, &dialRefused{addr: host, why: why}
					}
				}
			}
			return plain(ctx, network, addr)
		}
	}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, _ := net.SplitHostPort(addr)
		if _, ok := proxies.Load(net.JoinHostPort(strings.ToLower(host), port)); ok || env.fetchAllowed(host) {
			return plain(ctx, network, addr)
		}
		return check(ctx, network, addr)
	}
	return t
}

// guardedClient is base with its transport guarded, when it is an
// *http.Transport (or the default one); another RoundTripper (a test's)
// is used as it is.
func (env *Env) guardedClient(base *http.Client) *http.Client {
	c := *base
	switch t := c.Transport.(type) {
	case nil:
		if dt, ok := http.DefaultTransport.(*http.Transport); ok {
			c.Transport = env.guardTransport(dt)
		}
	case *http.Transport:
		c.Transport = env.guardTransport(t)
	}
	return &c
}

// refused turns a dial refusal in err into the refusal of the current
// hop; other errors are returned as they are.
func (h *hops) refused(err error) error {
	var d *dialRefused
	if errors.As(err, &d) {
		r := &hopRefused{hop: h.n, to: h.to.Redacted(), why: h.to.Hostname() + " resolves to " + d.addr + ", " + d.why}
		if h.from != nil {
			r.from = h.from.Redacted()
		}
		return r
	}
	var r *hopRefused
	if errors.As(err, &r) {
		return r
	}
	return err
}
