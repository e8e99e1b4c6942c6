// Package engine is the agent's model: an OpenAI-compatible chat client
// (built on github.com/sashabaranov/go-openai v1.43.0, which no other
// package imports) that implements llm.Model against llama.cpp's
// llama-server, vLLM, Ollama, LM Studio and hosted OpenAI-compatible
// endpoints, and reads from each what context management needs: the window,
// the prompt tokens the engine counted, and what its prefix cache reused.
//
// Window discovery (Info) follows docs/design.md §3.1: the contextWindow setting;
// then the endpoint — llama.cpp 2026 builds' GET /v1/models data[].meta.n_ctx
// (per slot; n_ctx_train is not the window), late-2025 builds' GET /props
// default_generation_settings.n_ctx, vLLM's max_model_len, Ollama's /api/ps
// context_length (or a Modelfile num_ctx from /api/show), LM Studio's
// loaded_context_length; then, for hosted endpoints only, the models.dev
// catalog (limit.context, limit.output), cached on disk. Loopback, private,
// link-local, .local and .internal hosts never cause a catalog request.
//
// Completions (Complete) stream with stream_options.include_usage, assemble
// tool calls by index, keep reasoning (reasoning_content, or vLLM's and
// Ollama's reasoning) apart from the answer, and read usage,
// prompt_tokens_details.cached_tokens and llama.cpp's timings from the raw
// chunks. llama.cpp is sent cache_prompt:true, n_cache_reuse (reuse.go)
// and, on a server with several slots, id_slot: one slot per session,
// another for its subagents (slots.go).
// A stream that ends without a
// finish_reason is re-issued without streaming to get the real error; an
// engine that refuses streaming with tools (llama.cpp of spring 2025) is
// asked without streaming from then on. Context overflows in every engine's
// shape — llama.cpp's exceed_context_size_error (also the old streamed
// `error:` line), vLLM's 400 (nested and flat), OpenAI's
// context_length_exceeded — become *llm.OverflowError, carrying the
// window when the engine states it; 429 and 5xx are retried with bounded
// backoff honouring Retry-After. The API key never appears in a log line or
// an error.
package engine

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reika-lsp/reika-lsp/agent/llm"
)

// Client is an llm.Model over an OpenAI-compatible endpoint. It is safe
// for concurrent use.
type Client struct {
	cfg        Config
	base       *url.URL
	baseURL    string // without a trailing slash
	rootURL    string // baseURL without its /v1
	displayURL string // baseURL without user info
	local      bool   // a local host: never ask the catalog
	http       *http.Client
	oa         *openai.Client
	red        redactor
	sleep      func(context.Context, time.Duration) error

	mu          sync.Mutex
	info        *llm.ModelInfo // guarded by mu: the discovered info
	again       bool           // guarded by mu: discover again on the next Info
	noStreaming bool           // guarded by mu: the engine refuses stream with tools
	onLoading   func(bool)     // guarded by mu: told when the engine loads its model
	loading     bool           // guarded by mu: the engine said it is loading
	onDown      func(bool)     // guarded by mu: told when a request waits for the engine
	down        bool           // guarded by mu: a request waits for the engine
	noTokenize  bool           // guarded by mu: the engine has no /tokenize
	slots       int            // guarded by mu: llama-server's slots (0: unknown)
	slotsKnown  bool           // guarded by mu: slots was asked for

	flight *discoveryFlight // guarded by mu: the discovery running
	pin    slotPin          // the session's slot (slots.go)
}

var _ llm.Model = (*Client)(nil)

// New checks cfg and returns a client. It makes no request: discovery
// happens on the first Info or Complete.
func New(cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	if cfg.ContextWindow < 0 {
		return nil, fmt.Errorf("context window %d: must not be negative", cfg.ContextWindow)
	}
	red := redactor{key: cfg.APIKey}
	base, ok := httpURL(strings.TrimRight(cfg.BaseURL, "/"))
	if !ok {
		return nil, fmt.Errorf("invalid base URL %q: want http(s)://host[:port]/v1", red.text(cfg.BaseURL))
	}
	if _, ok := httpURL(cfg.ModelsURL); !ok {
		return nil, fmt.Errorf("invalid models URL %q: want http(s)://host/path, like %s", red.text(cfg.ModelsURL), llm.DefaultModelsURL)
	}
	c := &Client{
		cfg:     cfg,
		base:    base,
		baseURL: base.String(),
		local:   isLocalHost(base.Hostname()),
		http:    cfg.HTTPClient,
		red:     red,
		sleep:   sleepCtx,
	}
	c.pin.sub, c.pin.lastTask = -1, -1
	display := *base
	display.User = nil
	c.displayURL = red.text(display.String())
	c.rootURL = strings.TrimSuffix(c.baseURL, "/v1")
	if c.http == nil {
		c.http = &http.Client{}
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = c.baseURL
	oc.HTTPClient = &transport{http: c.http, extra: fieldsOf}
	// llama-server sends SSE pings while it processes a long prompt; each
	// counts as an "empty message" to go-openai.
	oc.EmptyMessagesLimit = 1 << 20
	c.oa = openai.NewClientWithConfig(oc)
	return c, nil
}

// httpURL parses s as an http or https URL with a host.
func httpURL(s string) (*url.URL, bool) {
	u, err := url.Parse(s)
	return u, err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// logf writes a log line through cfg.Logf, with the API key redacted.
func (c *Client) logf(format string, args ...any) {
	if c.cfg.Logf != nil {
		c.cfg.Logf("%s", c.red.text(fmt.Sprintf(format, args...)))
	}
}

// Info reports the model and its window, discovered on the first call and
// cached (an Ollama or LM Studio model that is not loaded yet is looked at
// again on the next call). The error is an *llm.UnreachableError when the
// engine cannot be reached, and a plain error when the configured model is
// not served (or none is configured and the endpoint serves several); the
// returned info then holds what is known.
//
// Calls made while a discovery runs wait for it and share its outcome, so
// a run whose background discovery and first request both ask discovers
// (and logs each fact) once.
func (c *Client) Info(ctx context.Context) (llm.ModelInfo, error) {
	c.mu.Lock()
	for c.info == nil || c.again {
		f := c.flight
		if f == nil {
			break
		}
		c.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return llm.ModelInfo{}, ctx.Err()
		}
		if !f.cancelled {
			return f.info, f.err
		}
		c.mu.Lock() // the discovery was cancelled by its caller: run one
	}
	if c.info != nil && !c.again {
		info := *c.info
		c.mu.Unlock()
		return info, nil
	}
	f := &discoveryFlight{done: make(chan struct{})}
	c.flight = f
	c.mu.Unlock()
	f.info, f.err = c.discoverOnce(ctx)
	f.cancelled = ctx.Err() != nil
	c.mu.Lock()
	c.flight = nil
	c.mu.Unlock()
	close(f.done)
	return f.info, f.err
}

// discoveryFlight is a discovery running, for the calls that wait for it.
type discoveryFlight struct {
	done      chan struct{}
	info      llm.ModelInfo
	err       error
	cancelled bool // its caller's context ended
}

// discoverOnce discovers and keeps what was found.
func (c *Client) discoverOnce(ctx context.Context) (llm.ModelInfo, error) {
	d, err := c.discover(ctx)
	if err != nil {
		return d.info, c.red.error(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.info != nil && c.info.WindowSource == llm.SourceOverflow && d.info.WindowSource == llm.SourceNone {
		d.info.Window, d.info.WindowSource, d.info.Reason = c.info.Window, c.info.WindowSource, ""
	}
	c.info, c.again = &d.info, d.again
	return d.info, nil
}

// ensureInfo returns the cached info, discovering it once.
func (c *Client) ensureInfo(ctx context.Context) (llm.ModelInfo, error) {
	c.mu.Lock()
	if c.info != nil {
		info := *c.info
		c.mu.Unlock()
		return info, nil
	}
	c.mu.Unlock()
	return c.Info(ctx)
}

// adoptWindow takes the window an overflow error states when it is smaller
// than the one known (source "overflow").
func (c *Client) adoptWindow(o *llm.OverflowError) {
	if o.Window <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.info == nil || c.info.Window != 0 && c.info.Window <= o.Window {
		return
	}
	c.logf("engine: the engine states a window of %d tokens (was %d from %s)", o.Window, c.info.Window, c.info.WindowSource)
	c.info.Window, c.info.WindowSource, c.info.Reason = o.Window, llm.SourceOverflow, ""
}
