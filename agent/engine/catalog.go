package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The models.dev catalog (https://models.dev/api.json) lists hosted models
// by provider with limit.context and limit.output. It is consulted for
// hosted endpoints only: a local engine's runtime window is usually far
// smaller than the catalog's figure for the same model, and asking the
// internet about a private host would leak its model names for nothing.

// DefaultCatalogMaxAge is how long a cached catalog is used without asking
// for a fresh one.
const DefaultCatalogMaxAge = 24 * time.Hour

// catalogTimeout bounds the catalog download.
const catalogTimeout = 30 * time.Second

// isLocalHost reports whether host (a URL's hostname) is a loopback,
// private (RFC 1918, fc00::/7, 100.64.0.0/10), link-local or unspecified
// address, localhost, a .local, .internal, .lan, .localhost or .home.arpa
// name, or a single-label name (a machine on the LAN).
func isLocalHost(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if i := strings.IndexByte(h, '%'); i >= 0 {
		h = h[:i] // an IPv6 zone
	}
	if h == "" || h == "localhost" {
		return true
	}
	for _, suffix := range []string{".localhost", ".local", ".internal", ".lan", ".home.arpa"} {
		if strings.HasSuffix(h, suffix) {
			return true
		}
	}
	if ip := net.ParseIP(h); ip != nil {
		return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
			ip.IsUnspecified() || cgnat.Contains(ip)
	}
	return !strings.Contains(h, ".")
}

var cgnat = &net.IPNet{IP: net.IPv4(100, 64, 0, 0), Mask: net.CIDRMask(10, 32)}

// catalogLimits are a model's limits in the catalog.
type catalogLimits struct{ context, output int }

// catalogLimits looks the model up in the catalog. note says where it was
// found, or why not.
func (c *Client) catalogLimits(ctx context.Context, model string) (catalogLimits, string) {
	data, err := c.loadCatalog(ctx)
	if err != nil {
		c.logf("engine: models.dev catalog: %v", err)
		return catalogLimits{}, fmt.Sprintf("the models.dev catalog is unavailable (%v)", err)
	}
	lim, where, ok := lookupCatalog(data, c.base, model)
	if !ok {
		return catalogLimits{}, fmt.Sprintf("the models.dev catalog does not list %s", model)
	}
	return lim, where
}

// catalogPath is where the catalog from the configured URL is cached.
func (c *Client) catalogPath() string {
	sum := sha256.Sum256([]byte(c.cfg.ModelsURL))
	return filepath.Join(c.cfg.CacheDir, "models-dev-"+hex.EncodeToString(sum[:6])+".json")
}

// loadCatalog returns the catalog: the cached copy while it is fresh, else
// a download (saved for next time), else a stale copy.
func (c *Client) loadCatalog(ctx context.Context) ([]byte, error) {
	path := c.catalogPath()
	st, statErr := os.Stat(path)
	if statErr == nil && time.Since(st.ModTime()) < c.cfg.CatalogMaxAge {
		if b, err := os.ReadFile(path); err == nil && json.Valid(b) {
			return b, nil
		}
	}
	b, err := c.fetchCatalog(ctx)
	if err == nil {
		if err := writeFileAtomic(path, b); err != nil {
			c.logf("engine: caching the models.dev catalog: %v", err)
		}
		return b, nil
	}
	if statErr == nil {
		if old, rerr := os.ReadFile(path); rerr == nil && json.Valid(old) {
			c.logf("engine: models.dev catalog: %v; using the copy cached %s", err, st.ModTime().Format(time.RFC3339))
			return old, nil
		}
	}
	return nil, err
}

// fetchCatalog downloads the catalog. It never sends the engine's API key.
func (c *Client) fetchCatalog(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, catalogTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.cfg.ModelsURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, innerURLError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", c.cfg.ModelsURL, resp.Status)
	}
	b, err := readAllLimit(resp.Body, maxBody)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", c.cfg.ModelsURL, err)
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("GET %s: not a catalog: %v", c.cfg.ModelsURL, err)
	}
	return b, nil
}

func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".models-dev-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
	}
	return werr
}

// catalogProvider is one provider of the models.dev api.json.
type catalogProvider struct {
	ID     optString               `json:"id"`
	API    optString               `json:"api"`
	Models map[string]catalogModel `json:"models"`
}

type catalogModel struct {
	Limit struct {
		Context optInt `json:"context"`
		Output  optInt `json:"output"`
	} `json:"limit"`
}

// catalogHosts maps hosted API hosts to models.dev provider ids, for
// providers whose catalog entry has no "api" URL to match.
var catalogHosts = map[string]string{
	"api.openai.com":                    "openai",
	"api.anthropic.com":                 "anthropic",
	"openrouter.ai":                     "openrouter",
	"api.deepseek.com":                  "deepseek",
	"api.groq.com":                      "groq",
	"api.mistral.ai":                    "mistral",
	"api.x.ai":                          "xai",
	"api.together.xyz":                  "togetherai",
	"api.fireworks.ai":                  "fireworks-ai",
	"generativelanguage.googleapis.com": "google",
	"api.cerebras.ai":                   "cerebras",
	"api.moonshot.ai":                   "moonshotai",
	"api.z.ai":                          "zai",
}

// lookupCatalog finds model in the catalog: first at the provider whose api
// URL (or known host) is the endpoint's, else at every provider that lists
// it, taking the smallest context (the safe error) when they differ.
func lookupCatalog(data []byte, base *url.URL, model string) (catalogLimits, string, bool) {
	var cat map[string]json.RawMessage
	if !lenient(data, &cat) || model == "" {
		return catalogLimits{}, "", false
	}
	providers := make(map[string]catalogProvider, len(cat))
	for id, raw := range cat {
		var p catalogProvider
		if lenient(raw, &p) {
			providers[id] = p
		}
	}
	// The endpoint's own provider.
	for _, id := range ownProviders(providers, base) {
		if m, ok := providers[id].Models[model]; ok {
			if lim, ok := m.limits(); ok {
				return lim, "provider " + id + ", model " + model, true
			}
		}
	}
	// Any provider; a "vendor/model" id is also tried as "model".
	names := []string{model}
	if i := strings.LastIndexByte(model, '/'); i >= 0 && i < len(model)-1 {
		names = append(names, model[i+1:])
	}
	for _, name := range names {
		if best, found := smallestLimits(providers, name); found > 0 {
			return best, fmt.Sprintf("model %s, smallest of %d providers", name, found), true
		}
	}
	return catalogLimits{}, "", false
}

// limits are the model's context and output limits; ok when it states a
// context.
func (m catalogModel) limits() (catalogLimits, bool) {
	ctx, ok := m.Limit.Context.pos()
	out, _ := m.Limit.Output.pos()
	return catalogLimits{context: ctx, output: out}, ok
}

// ownProviders gives the providers whose api URL's host, or whose known
// host, is base's.
func ownProviders(providers map[string]catalogProvider, base *url.URL) []string {
	var own []string
	host := ""
	if base != nil {
		host = strings.ToLower(base.Hostname())
	}
	for id, p := range providers {
		if p.API == "" {
			continue
		}
		if u, err := url.Parse(string(p.API)); err == nil && strings.EqualFold(u.Hostname(), host) && host != "" {
			own = append(own, id)
		}
	}
	if id, ok := catalogHosts[host]; ok {
		own = append(own, id)
	}
	return own
}

// smallestLimits takes the smallest context and output of every provider
// that lists model name with limits, and how many do.
func smallestLimits(providers map[string]catalogProvider, name string) (best catalogLimits, found int) {
	for _, p := range providers {
		m, ok := p.Models[name]
		if !ok {
			continue
		}
		lim, ok := m.limits()
		if !ok {
			continue
		}
		if found == 0 || lim.context < best.context {
			best.context = lim.context
		}
		if lim.output > 0 && (best.output == 0 || lim.output < best.output) {
			best.output = lim.output
		}
		found++
	}
	return best, found
}
