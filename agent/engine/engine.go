// Package engine is the agent's model: an OpenAI-compatible chat client
// (built on github.com/sashabaranov/go-openai v1.43.0, which no other
// package imports) that implements agent.Model against llama.cpp's
// llama-server, vLLM, Ollama, LM Studio and hosted OpenAI-compatible
// endpoints, and reads from each what context management needs: the window,
// the prompt tokens the engine counted, and what its prefix cache reused.
//
// Window discovery (Info) follows DESIGN.md §3.1: the contextWindow setting;
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
// and, for a subagent on a server with several slots, id_slot (slots.go).
// A stream that ends without a
// finish_reason is re-issued without streaming to get the real error; an
// engine that refuses streaming with tools (llama.cpp of spring 2025) is
// asked without streaming from then on. Context overflows in every engine's
// shape — llama.cpp's exceed_context_size_error (also the old streamed
// `error:` line), vLLM's 400 (nested and flat), OpenAI's
// context_length_exceeded — become *agent.OverflowError, carrying the
// window when the engine states it; 429 and 5xx are retried with bounded
// backoff honouring Retry-After. The API key never appears in a log line or
// an error.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// Config configures a Client.
type Config struct {
	// BaseURL is the OpenAI-compatible base URL, e.g.
	// http://127.0.0.1:8080/v1 (llama-server's default); "" means
	// agent.DefaultBaseURL.
	BaseURL string
	// BaseURLFrom is where BaseURL came from, as agent.Settings.Sources
	// says ("editor", "env", "profile NAME"; "" for the default): an
	// unreachable engine's hint names the setting to change there.
	BaseURLFrom string
	// APIKey is sent as a bearer token. It never appears in a log line or
	// an error.
	APIKey string
	// Model is the model id to request; "" means the endpoint's only model
	// (an error names the models when it serves several).
	Model string
	// ContextWindow is the window from the setting, the environment or the
	// profile; > 0 wins over discovery (source "setting").
	ContextWindow int
	// ModelsURL is the models.dev catalog URL (REIKA_MODELS_URL); "" means
	// agent.DefaultModelsURL.
	ModelsURL string
	// CacheDir is where the catalog is cached; "" means
	// $XDG_CACHE_HOME/reika (the user cache directory).
	CacheDir string
	// CatalogMaxAge is how long the cached catalog is used before a fresh
	// download; 0 means DefaultCatalogMaxAge.
	CatalogMaxAge time.Duration
	// HTTPClient makes every request; nil means a client of its own. Set no
	// Timeout on it: completions stream for as long as the model writes.
	HTTPClient *http.Client
	// Retry bounds the retries of 429, 5xx and dropped connections.
	Retry Retry
	// LoadWait bounds the wait for an engine that answers 503 "Loading
	// model" (llama-server while it loads); 0 means DefaultLoadWait.
	LoadWait time.Duration
	// CacheReuse is the cacheReuse setting: agent.CacheReuseAuto (0) asks
	// llama.cpp for DefaultCacheReuse, agent.CacheReuseOff for none
	// (n_cache_reuse 0), a positive number for that chunk size. Other
	// engines are never sent n_cache_reuse.
	CacheReuse int
	// Logf writes a log line; nil discards. Lines never hold the API key.
	Logf func(format string, args ...any)
}

// ConfigFromSettings maps the user's settings (DESIGN.md §5) onto a Config:
// base URL, API key, model, context window, catalog URL and chunk reuse.
// The caller adds the HTTP client and the logger.
func ConfigFromSettings(s agent.Settings) Config {
	return Config{BaseURL: s.BaseURL, BaseURLFrom: s.Sources["baseUrl"], APIKey: s.APIKey, Model: s.Model,
		ContextWindow: s.ContextWindow, ModelsURL: s.ModelsURL, CacheReuse: s.CacheReuse}
}

// Retry bounds retries. The zero value means the defaults.
type Retry struct {
	// Attempts is the most requests made for one call, the first included;
	// 0 means 3.
	Attempts int
	// Base is the first wait, doubled on each retry; 0 means 500ms.
	Base time.Duration
	// Max caps one wait. A Retry-After longer than Max ends the retries.
	// 0 means 30s.
	Max time.Duration
}

// Client is an agent.Model over an OpenAI-compatible endpoint. It is safe
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
	info        *agent.ModelInfo // guarded by mu: the discovered info
	again       bool             // guarded by mu: discover again on the next Info
	noStreaming bool             // guarded by mu: the engine refuses stream with tools
	onLoading   func(bool)       // guarded by mu: told when the engine loads its model
	loading     bool             // guarded by mu: the engine said it is loading
	noTokenize  bool             // guarded by mu: the engine has no /tokenize
	slots       int              // guarded by mu: llama-server's slots (0: unknown)
	slotsKnown  bool             // guarded by mu: slots was asked for
}

var _ agent.Model = (*Client)(nil)

// New checks cfg and returns a client. It makes no request: discovery
// happens on the first Info or Complete.
func New(cfg Config) (*Client, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = agent.DefaultBaseURL
	}
	if cfg.ModelsURL == "" {
		cfg.ModelsURL = agent.DefaultModelsURL
	}
	if cfg.CacheDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			dir = os.TempDir()
		}
		cfg.CacheDir = filepath.Join(dir, "reika")
	}
	if cfg.CatalogMaxAge <= 0 {
		cfg.CatalogMaxAge = DefaultCatalogMaxAge
	}
	if cfg.Retry.Attempts <= 0 {
		cfg.Retry.Attempts = 3
	}
	if cfg.Retry.Base <= 0 {
		cfg.Retry.Base = 500 * time.Millisecond
	}
	if cfg.Retry.Max <= 0 {
		cfg.Retry.Max = 30 * time.Second
	}
	if cfg.LoadWait <= 0 {
		cfg.LoadWait = DefaultLoadWait
	}
	if cfg.ContextWindow < 0 {
		return nil, fmt.Errorf("context window %d: must not be negative", cfg.ContextWindow)
	}
	red := redactor{key: cfg.APIKey}
	base, err := url.Parse(strings.TrimRight(cfg.BaseURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("invalid base URL %q: want http(s)://host[:port]/v1", red.text(cfg.BaseURL))
	}
	if _, err := url.Parse(cfg.ModelsURL); err != nil {
		return nil, fmt.Errorf("invalid models URL %q: %v", cfg.ModelsURL, err)
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

func (c *Client) logf(format string, args ...any) {
	if c.cfg.Logf != nil {
		c.cfg.Logf("%s", c.red.text(fmt.Sprintf(format, args...)))
	}
}

// extraFields are the non-OpenAI fields of one chat request: llama.cpp's
// cache_prompt, n_cache_reuse and, for a subagent on a server with several
// slots, id_slot. nil for other engines.
func (c *Client) extraFields(ctx context.Context, info agent.ModelInfo, req *agent.Request) map[string]any {
	if info.Engine != EngineLlamaCpp {
		return nil
	}
	f := map[string]any{"cache_prompt": true}
	if n, ok := c.cacheReuse(info); ok {
		f["n_cache_reuse"] = n
	}
	if req.Subagent {
		if slot, ok := c.subagentSlot(ctx, info); ok {
			f["id_slot"] = slot
		}
	}
	return f
}

type fieldsKey struct{}

// withFields carries the extra fields of a chat request to the transport.
func withFields(ctx context.Context, f map[string]any) context.Context {
	return context.WithValue(ctx, fieldsKey{}, f)
}

// fieldsOf are the extra fields a request's context carries.
func fieldsOf(ctx context.Context) map[string]any {
	f, _ := ctx.Value(fieldsKey{}).(map[string]any)
	return f
}

// Info reports the model and its window, discovered on the first call and
// cached (an Ollama or LM Studio model that is not loaded yet is looked at
// again on the next call). The error is an *agent.UnreachableError when the
// engine cannot be reached, and a plain error when the configured model is
// not served (or none is configured and the endpoint serves several); the
// returned info then holds what is known.
func (c *Client) Info(ctx context.Context) (agent.ModelInfo, error) {
	c.mu.Lock()
	if c.info != nil && !c.again {
		info := *c.info
		c.mu.Unlock()
		return info, nil
	}
	c.mu.Unlock()
	d, err := c.discover(ctx)
	if err != nil {
		return d.info, c.red.error(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.info != nil && c.info.WindowSource == agent.SourceOverflow && d.info.WindowSource == agent.SourceNone {
		d.info.Window, d.info.WindowSource, d.info.Reason = c.info.Window, c.info.WindowSource, ""
	}
	c.info, c.again = &d.info, d.again
	return d.info, nil
}

// ensureInfo returns the cached info, discovering it once.
func (c *Client) ensureInfo(ctx context.Context) (agent.ModelInfo, error) {
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
func (c *Client) adoptWindow(o *agent.OverflowError) {
	if o.Window <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.info == nil || c.info.Window != 0 && c.info.Window <= o.Window {
		return
	}
	c.logf("engine: the engine states a window of %d tokens (was %d from %s)", o.Window, c.info.Window, c.info.WindowSource)
	c.info.Window, c.info.WindowSource, c.info.Reason = o.Window, agent.SourceOverflow, ""
}

// Complete sends one chat completion request; see agent.Model. It waits
// for an engine that is loading its model; asks once more when the engine
// rejects what the model generated (a new sample may parse), then names
// the engine's words; and drops the tool calls of a reply cut at
// max_tokens or at the window (finish_reason "length"): the last of them
// may be cut inside its arguments, so the round is a cut reply, not calls.
func (c *Client) Complete(ctx context.Context, req *agent.Request, onDelta func(agent.Delta)) (*agent.Response, error) {
	start := time.Now()
	info, err := c.ensureInfo(ctx)
	if err != nil {
		return nil, c.red.error(err)
	}
	oreq := c.buildRequest(info.Model, req)
	fields := c.extraFields(ctx, info, req)
	ctx = withFields(ctx, fields)
	var resp *agent.Response
	for attempt := 1; ; attempt++ {
		sent := 0
		err = c.whileLoading(ctx, func() error {
			var e error
			resp, sent, e = c.completeOnce(ctx, oreq, onDelta)
			return e
		})
		if !rejectedOutput(err) {
			break
		}
		var a *APIError
		errors.As(err, &a)
		if attempt > 1 {
			err = &rejectedError{err: a}
			break
		}
		c.logf("engine: the engine rejected what the model generated (%s); asking once more", a.Message)
		if sent > 0 {
			onDelta = nil // the transcript has the first try's text
		}
	}
	if err != nil {
		var o *agent.OverflowError
		if errors.As(err, &o) {
			c.adoptWindow(o)
		}
		return nil, c.red.error(err)
	}
	if resp.FinishReason == "length" && len(resp.Message.ToolCalls) > 0 {
		c.logf("engine: the reply was cut (finish_reason length) after %d tool calls; dropping them, the last may be cut short", len(resp.Message.ToolCalls))
		resp.Message.ToolCalls = nil
	}
	resp.Elapsed = time.Since(start)
	if n, ok := fields["n_cache_reuse"].(int); ok {
		resp.CacheReuse = n
	}
	return resp, nil
}

// completeOnce makes one request: streamed unless the engine refuses to
// stream with tools, re-issued without streaming when a stream breaks
// without saying why. sent counts the deltas passed on.
func (c *Client) completeOnce(ctx context.Context, oreq openai.ChatCompletionRequest, onDelta func(agent.Delta)) (*agent.Response, int, error) {
	c.mu.Lock()
	stream := !(c.noStreaming && len(oreq.Tools) > 0)
	c.mu.Unlock()

	var (
		resp *agent.Response
		err  error
	)
	sent := 0 // deltas already passed on
	if stream {
		resp, sent, err = c.stream(ctx, oreq, onDelta)
		var failed *streamFailedError
		switch {
		case errors.Is(err, errStreamRefused):
			c.logf("engine: the engine refuses to stream with tools; asking without streaming")
			c.mu.Lock()
			c.noStreaming = true
			c.mu.Unlock()
			stream = false
		case errors.As(err, &failed) && (rejectedOutput(failed.cause) || isLoading(failed.cause)):
			// The engine said what went wrong: asking again without
			// streaming would only generate the same reply once more.
			return nil, sent, failed.cause
		case errors.As(err, &failed):
			c.logf("engine: %v; asking again without streaming", failed)
			stream = false
		}
	}
	if !stream {
		resp, err = c.complete(ctx, oreq)
		if err == nil && sent == 0 && onDelta != nil && (resp.Message.Content != "" || resp.Message.Reasoning != "") {
			onDelta(agent.Delta{Content: resp.Message.Content, Reasoning: resp.Message.Reasoning})
			sent++
		}
	}
	return resp, sent, err
}

// buildRequest converts the agent's request. Temperature is left unset;
// max_tokens is sent only when the request caps the completion.
func (c *Client) buildRequest(model string, req *agent.Request) openai.ChatCompletionRequest {
	r := openai.ChatCompletionRequest{Model: model}
	for _, m := range req.Messages {
		om := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, ReasoningContent: m.Reasoning, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			args := tc.Arguments
			if args == "" {
				args = "{}"
			}
			om.ToolCalls = append(om.ToolCalls, openai.ToolCall{ID: tc.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: tc.Name, Arguments: args}})
		}
		r.Messages = append(r.Messages, om)
	}
	for _, t := range req.Tools {
		params := json.RawMessage(t.Parameters)
		if len(params) == 0 || !json.Valid(params) {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		r.Tools = append(r.Tools, openai.Tool{Type: openai.ToolTypeFunction,
			Function: &openai.FunctionDefinition{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	if req.ToolChoice != "" && len(r.Tools) > 0 {
		r.ToolChoice = req.ToolChoice
	}
	if req.MaxTokens > 0 {
		// max_tokens is what every local engine reads (Ollama's /v1 reads
		// nothing else), so it is sent despite go-openai's deprecation;
		// OpenAI's reasoning models, which refuse it, get
		// max_completion_tokens.
		if reasoningModel(model) {
			r.MaxCompletionTokens = req.MaxTokens
		} else {
			r.MaxTokens = req.MaxTokens //lint:ignore SA1019 see above
		}
	}
	return r
}

// reasoningModel reports whether go-openai refuses max_tokens for model.
func reasoningModel(model string) bool {
	probe := openai.ChatCompletionRequest{Model: model}
	probe.MaxTokens = 1 //lint:ignore SA1019 probing go-openai's own rule
	return openai.NewReasoningValidator().Validate(probe) != nil
}

var errStreamRefused = errors.New("the engine refuses to stream with tools")

// streamFailedError is a stream that ended without a finish_reason.
type streamFailedError struct{ cause error }

func (e *streamFailedError) Error() string {
	if e.cause == nil {
		return "the stream ended without a finish_reason"
	}
	return "the stream ended without a finish_reason: " + e.cause.Error()
}

// stream makes a streamed request. sent counts the deltas passed on.
func (c *Client) stream(ctx context.Context, oreq openai.ChatCompletionRequest, onDelta func(agent.Delta)) (*agent.Response, int, error) {
	oreq.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	var (
		st  *openai.ChatCompletionStream
		cap *capture
	)
	err := c.retry(ctx, func(ctx context.Context, cp *capture) error {
		s, err := c.oa.CreateChatCompletionStream(ctx, oreq)
		if err != nil {
			err = c.classify(ctx, err, cp)
			if refusesStreamWithTools(err) && len(oreq.Tools) > 0 {
				return errStreamRefused // not worth a retry
			}
			return err
		}
		st, cap = s, cp
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	defer st.Close()
	acc := newAccumulator()
	var broken error
	for {
		raw, err := st.RecvRaw()
		if err == io.EOF {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, acc.deltas, ctx.Err()
			}
			broken = c.classify(ctx, err, cap)
			break
		}
		if len(raw) == 0 {
			continue
		}
		ch, err := parseChunk(raw)
		if err != nil {
			broken = err
			break
		}
		acc.add(ch, onDelta)
	}
	if ctx.Err() != nil {
		return nil, acc.deltas, ctx.Err()
	}
	// An error the stream carried: an overflow is final; anything else is
	// asked again without streaming, for the real error.
	if cap.streamErr != nil {
		if e := c.errorFromBody(0, cap.streamErr, nil); agent.IsOverflow(e) {
			return nil, acc.deltas, e
		} else if broken == nil {
			broken = e
		}
	}
	if agent.IsOverflow(broken) {
		return nil, acc.deltas, broken
	}
	if acc.finish == "" {
		return nil, acc.deltas, &streamFailedError{cause: broken}
	}
	return &agent.Response{
		Message:      acc.message(),
		FinishReason: acc.finish,
		Usage:        usageOf(acc.usage, acc.timings),
		Timings:      timingsOf(acc.timings),
	}, acc.deltas, nil
}

// refusesStreamWithTools recognises llama.cpp's "Cannot use tools with
// stream" and its kin.
func refusesStreamWithTools(err error) bool {
	var a *APIError
	if !errors.As(err, &a) || (a.Status != 400 && a.Status != 500 && a.Status != 501) {
		return false
	}
	m := strings.ToLower(a.Message)
	return strings.Contains(m, "tool") && strings.Contains(m, "stream")
}

// complete makes a non-streamed request.
func (c *Client) complete(ctx context.Context, oreq openai.ChatCompletionRequest) (*agent.Response, error) {
	oreq.Stream, oreq.StreamOptions = false, nil
	var (
		resp openai.ChatCompletionResponse
		body []byte
	)
	err := c.retry(ctx, func(ctx context.Context, cp *capture) error {
		r, err := c.oa.CreateChatCompletion(ctx, oreq)
		if err != nil {
			return c.classify(ctx, err, cp)
		}
		resp, body = r, cp.body
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(resp.Choices) == 0 {
		return nil, &APIError{Status: http.StatusOK, Message: "the engine returned no choices: " + plainText(body)}
	}
	ch := resp.Choices[0]
	x := parseExtras(body)
	m := ctxwin.Message{Role: ctxwin.RoleAssistant, Content: ch.Message.Content, Reasoning: ch.Message.ReasoningContent}
	if m.Reasoning == "" {
		m.Reasoning = x.reasoning()
	}
	for _, tc := range ch.Message.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, ctxwin.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	fillCallIDs(m.ToolCalls)
	finish := string(ch.FinishReason)
	if finish == "" || finish == string(openai.FinishReasonNull) {
		finish = "stop"
		if len(m.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	return &agent.Response{Message: m, FinishReason: finish, Usage: usageOf(x.Usage, x.Timings), Timings: timingsOf(x.Timings)}, nil
}

// retry runs op until it succeeds, fails for good, or the attempts run
// out. Each attempt gets a fresh capture.
func (c *Client) retry(ctx context.Context, op func(context.Context, *capture) error) error {
	r := c.cfg.Retry
	for attempt := 1; ; attempt++ {
		cp := &capture{}
		err := op(withCapture(ctx, cp), cp)
		if err == nil {
			return nil
		}
		again, after := retryableError(err)
		if !again || attempt >= r.Attempts {
			return err
		}
		wait := r.Base << (attempt - 1)
		if after > 0 {
			if after > r.Max {
				return fmt.Errorf("%w (the engine asks to wait %s; not retrying)", err, after.Round(time.Second))
			}
			wait = after
		}
		wait = min(wait, r.Max)
		c.logf("engine: %v; retrying in %s (attempt %d of %d)", err, wait, attempt+1, r.Attempts)
		if err := c.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// readAllLimit reads r whole, failing when it holds more than limit bytes.
func readAllLimit(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("response larger than %d bytes", limit)
	}
	return b, nil
}
