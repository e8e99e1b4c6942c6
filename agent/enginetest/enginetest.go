// Package enginetest is a protocol-faithful fake inference engine for tests
// and benchmarks: an HTTP server that speaks the OpenAI-compatible chat API
// the way real engines do, with their exact JSON shapes.
//
// Shapes it reproduces (Options.Shape):
//
//   - "llamacpp": llama.cpp's llama-server as built in 2026 — GET /v1/models
//     with data[].meta.n_ctx (the per-slot window) beside n_ctx_train, GET
//     /props, usage with prompt_tokens_details.cached_tokens (PR #19361),
//     timings (cache_n, prompt_n, prompt_ms, ...) on the last chunk, and the
//     400 exceed_context_size_error with n_prompt_tokens and n_ctx when the
//     prompt reaches n_ctx. With Options.StreamErrorLine a streamed overflow
//     is reported the pre-October-2025 way (HTTP 200, an `error:` SSE line,
//     then [DONE]).
//   - "llamacpp-2025": a late-2025 llama-server — /v1/models meta without
//     n_ctx (so the window is only in GET /props
//     default_generation_settings.n_ctx) and usage without
//     prompt_tokens_details; timings as above.
//   - "vllm": vLLM's OpenAI server — /v1/models with max_model_len, the 400
//     BadRequestError when prompt + max_tokens exceeds it (nested form, or
//     the older flat form with Options.FlatErrors), block-granular
//     cached_tokens (omitted when 0), reasoning in the `reasoning` field.
//   - "hosted": an OpenAI-style hosted endpoint — no window anywhere, usage
//     with cached_tokens (1024-token minimum, 128-token steps), and the 400
//     context_length_exceeded error.
//   - "ollama": Ollama's /v1 layer with /api/version, /api/ps (context_length
//     of the loaded model), /api/show (model_info <arch>.context_length and
//     Modelfile parameters) and its silent prompt truncation on overflow.
//   - "lmstudio": LM Studio with /api/v0/models (loaded_context_length,
//     max_context_length) and the 0.4 /api/v1/models listing.
//
// The fake keeps llama-server's cache over its own deterministic
// tokenization (see tokenizer): each prompt is rendered by a ChatML-like
// chat template (which re-serialises tool arguments as Qwen's does); the
// llama.cpp shapes serve it from one of Options.Slots slots (id_slot, or
// the most similar, or the least recently used) and reuse the longest
// common token prefix with what the slot holds (the previous prompt plus
// every token generated for it but the last), then, with n_cache_reuse
// (per request, or Options.CacheReuse for --cache-reuse), the chunks of the
// old prompt that the new one still holds after its first difference, as
// llama.cpp's chunk scan finds them; earlier prompts kept in host memory
// are restored as the server restores them (cache.go). A model that cannot
// shift (Options.NoShift) refuses chunk reuse with the server's warning
// (Server.Log). The reuse is reported as llama.cpp does (cache_n,
// prompt_n, prompt_ms); other shapes reuse the common prefix of one slot.
// The llama.cpp shape is held to a real llama-server by one table of checks
// (parity_test.go, parity_cache_test.go): auth on every route but /health,
// /props and /slots, /apply-template, 503 "Loading model"
// (Options.Loading), tool calls kept by a length cut, the chat parser's 500
// (Fault.ParserError), the prefix and host-memory caches, the chunk scan
// on the request sequences of issue 14's table, slots and id_slot. Replies come
// from a Script, a function of the parsed request; faults (5xx, 429, reset
// or truncated streams, a streamed error, a slow first byte) are injected
// per reply. Everything is deterministic: ids, timestamps and timings
// derive from the request number and the token counts, never the clock.
package enginetest

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// Shapes.
const (
	ShapeLlamaCpp     = "llamacpp"
	ShapeLlamaCpp2025 = "llamacpp-2025"
	ShapeVLLM         = "vllm"
	ShapeHosted       = "hosted"
	ShapeOllama       = "ollama"
	ShapeLMStudio     = "lmstudio"
)

// Shapes lists every shape the fake serves.
var Shapes = []string{ShapeLlamaCpp, ShapeLlamaCpp2025, ShapeVLLM, ShapeHosted, ShapeOllama, ShapeLMStudio}

// Defaults of Options.
const (
	DefaultWindow           = 16384
	DefaultModel            = "fake-coder"
	DefaultCharsPerToken    = 3.5
	DefaultPromptMSPerToken = 0.5
	// predictedMSPerToken is the simulated generation cost in timings.
	predictedMSPerToken = 20.0
)

// Options configure a fake engine. The zero value is a llama.cpp 2026
// server with a 16384-token window.
type Options struct {
	// Shape is one of the Shape constants; "" means ShapeLlamaCpp.
	Shape string
	// Window is n_ctx (llama.cpp), max_model_len (vLLM), the loaded context
	// (Ollama, LM Studio), or the hosted model's limit. 0 means
	// DefaultWindow.
	Window int
	// TrainedWindow is n_ctx_train, Ollama's <arch>.context_length and LM
	// Studio's max_context_length; 0 means 4×Window.
	TrainedWindow int
	// Model is the model id the engine lists; "" means DefaultModel.
	Model string
	// Script decides each reply; nil answers "ok" to everything.
	Script Script
	// CharsPerToken is the tokenizer's prose density; 0 means
	// DefaultCharsPerToken. Code tokenizes denser.
	CharsPerToken float64
	// CodeCharsPerToken, when set, overrides CharsPerToken: the tokenizer is
	// tuned so that Go source tokenizes at about this many characters per
	// token (prose then comes out sparser). Tests use it to make the engine
	// count denser or sparser than a client's estimate.
	CodeCharsPerToken float64
	// NoTokenize turns off /tokenize and /apply-template, which the
	// llama.cpp and vLLM shapes otherwise serve (see tokenize_http.go).
	NoTokenize bool
	// PromptMSPerToken is the simulated prefill cost per processed prompt
	// token, reported in timings.prompt_ms; 0 means DefaultPromptMSPerToken.
	PromptMSPerToken float64
	// APIKey, when set, is required as "Authorization: Bearer KEY" (llama.cpp
	// shapes leave only /health public, as llama-server 0.7.0 does).
	APIKey string
	// Slots is llama.cpp's total_slots (-np); 0 means 1. Each has the
	// per-slot Window; the fake serves every request from one of them.
	// llama-server's default, with no -np, is DefaultSlots sharing one KV
	// cache: Slots DefaultSlots and KVUnified.
	Slots int
	// KVUnified models slots that share one KV cache (-kvu, the default
	// when -np is not given): each request saves the other idle slots in
	// host memory and clears them.
	KVUnified bool
	// Loading starts a llama.cpp shape loading its model: every route
	// answers 503 "Loading model" until SetLoading(false).
	Loading bool
	// NoHostCache turns off llama.cpp's host-memory prompt cache
	// (--cache-ram 0).
	NoHostCache bool
	// HostCacheTokens bounds what llama.cpp's host memory keeps, in tokens
	// (the server bounds it by --cache-ram, about 8 GiB of KV state); 0
	// keeps more than any test sends.
	HostCacheTokens int
	// CacheReuse is llama-server's --cache-reuse N: the n_cache_reuse of
	// requests that send none (0: chunk reuse off), see cache.go.
	CacheReuse int
	// NoShift models a model whose memory cannot shift (sliding-window or
	// recurrent layers): llama-server then disables --cache-reuse at start
	// and refuses a request's n_cache_reuse, each time with a warning in
	// its log, and reuses only the common prefix.
	NoShift bool

	// StreamErrorLine makes llama.cpp shapes report a streamed overflow as
	// builds before PR #16486 (Oct 2025) did: HTTP 200, `error: {...}`, then
	// `data: [DONE]`.
	StreamErrorLine bool
	// FlatErrors makes vLLM answer errors in the older flat form
	// {"object":"error","message":...}.
	FlatErrors bool
	// RejectStreamWithTools makes the engine refuse stream:true with tools
	// (HTTP 500 "Cannot use tools with stream"), as llama.cpp builds of
	// spring 2025 did.
	RejectStreamWithTools bool
	// OmitToolCallIDs leaves tool calls without ids, as some engines do.
	OmitToolCallIDs bool
	// Unloaded starts an Ollama or LM Studio model unloaded: /api/ps and
	// loaded_context_length report it only after the first completion.
	Unloaded bool
	// OllamaNumCtx makes Ollama's /api/show parameters carry "num_ctx
	// <Window>", as a Modelfile that sets it does.
	OllamaNumCtx bool
	// Lenient turns off the check that every tool result answers a tool
	// call of the preceding assistant message and every call is answered
	// (OpenAI rejects both with a 400; so does the fake by default).
	Lenient bool
}

// Script decides the reply to one chat completion request. It runs with the
// server's lock held, so it must not call the Server's methods, and while it
// blocks no other request is answered: to hold a response back, reply with
// Fault.FirstByteDelay, which ends when the client goes away.
type Script func(r *Request) Reply

// Request is what a script and a test see of one chat completion request.
type Request struct {
	Model    string
	Messages []ctxwin.Message // parsed from the wire
	Tools    []string         // tool names, in order
	// ToolChoice is the wire value: "", "auto", "none", "required", or the
	// function name of an object choice.
	ToolChoice string
	MaxTokens  int // max_tokens, max_completion_tokens or n_predict; 0 when absent
	Stream     bool
	// IncludeUsage is stream_options.include_usage.
	IncludeUsage bool
	// CachePrompt is the llama.cpp cache_prompt field; nil when absent.
	CachePrompt *bool
	// CacheReuse and IDSlot are llama.cpp's n_cache_reuse and id_slot
	// fields; nil when absent.
	CacheReuse *int
	IDSlot     *int
	// PromptTokens is the prompt's length in the fake's tokens.
	PromptTokens int
	// Index is the 0-based number of this chat completion request.
	Index int
}

// Reply is a script's answer.
type Reply struct {
	Content, Reasoning string
	// ToolCalls are the calls to make; Arguments is JSON text. An empty ID
	// is filled in by the engine (unless Options.OmitToolCallIDs). They are
	// dropped when the request offers no tools or says tool_choice "none",
	// as a real engine would not make them.
	ToolCalls []ctxwin.ToolCall
	// Finish is the finish_reason; "" derives it ("tool_calls" when there
	// are calls, else "stop"; "length" when max_tokens or the window cut
	// the reply).
	Finish string
	// Fault is injected into this request's response.
	Fault Fault
}

// Fault is a failure injected into one response.
type Fault struct {
	// Status answers with this HTTP status (e.g. 429, 500, 503) and an error
	// body in the shape's form, before any processing. The slot is untouched.
	Status int
	// RetryAfter is sent as the Retry-After header with Status.
	RetryAfter string
	// Message is the error message with Status or StreamError; "" picks one.
	Message string
	// Body, if set, replaces the error body sent with Status verbatim (an
	// HTML page from a proxy, say).
	Body string

	// Reset drops the connection (TCP reset) after AfterChunks stream chunks,
	// or before any byte of a non-streamed body.
	Reset bool
	// Truncate ends the stream cleanly after AfterChunks chunks, with no
	// finish_reason and no [DONE]; a non-streamed body is cut in half.
	Truncate bool
	// StreamError sends `data: {"error":...}` (a 500 server_error) after
	// AfterChunks chunks and ends the stream without [DONE], as llama.cpp
	// does for an error after streaming started.
	StreamError bool
	// Hold stops the stream after AfterChunks chunks and keeps the
	// connection open, sending nothing more, until the client goes away: a
	// reply cut off mid-stream by something else (the client killed).
	Hold bool
	// AfterChunks is how many data chunks precede Reset, Truncate,
	// StreamError or Hold; 0 means 1 (the role chunk). With Reset, -1 drops the
	// connection before the response's first byte.
	AfterChunks int
	// FirstByteDelay holds the response back before its first byte.
	FirstByteDelay time.Duration
	// ParserError answers as llama.cpp does when its chat parser rejects
	// what the model generated: HTTP 500 server_error "The model produced
	// output that does not match the expected peg-native format" (Message
	// replaces the text); streamed, HTTP 200 and that error as the only
	// `data:` line, without [DONE]. The slot keeps the prompt.
	ParserError bool
}

// IsZero reports whether f injects nothing.
func (f Fault) IsZero() bool { return f == Fault{} }

// Recorded is one chat completion request as the engine saw and answered it.
type Recorded struct {
	Index   int
	Path    string
	Body    []byte      // the raw request body
	Header  http.Header // the request headers
	Request Request     // parsed; zero when the body did not parse
	// PromptTokens is the prompt's length by the fake's tokenization.
	PromptTokens int
	// CacheN is the prompt tokens reused from the slot (llama.cpp cache_n);
	// PromptN the tokens processed; PromptMS their simulated cost.
	CacheN, PromptN int
	PromptMS        float64
	// Slot is the slot that served the request (llama.cpp shapes).
	Slot int
	// CacheReuse is the n_cache_reuse the chunk scan ran with (0: none ran);
	// Chunks what it reused after the common prefix; Restored says the slot
	// took a prompt kept in host memory first.
	CacheReuse int
	Chunks     []Chunk
	Restored   bool
	// CompletionTokens is the length of the reply generated.
	CompletionTokens int
	// Reply is the reply sent (after any cut by max_tokens or the window).
	Reply Reply
	// Overflowed says the engine refused (or, Ollama, truncated) the prompt
	// as too long for its window.
	Overflowed bool
	// Status is the HTTP status answered (200 for a streamed reply whose
	// stream then failed).
	Status int
}

// Server is a running fake engine. Its methods are safe for concurrent use.
type Server struct {
	ts   *httptest.Server
	opts Options
	tok  *tokenizer

	mu      sync.Mutex
	script  Script      // guarded by mu
	records []Recorded  // guarded by mu
	calls   []string    // guarded by mu
	cache   promptCache // guarded by mu: the slots and the host-memory prompt cache
	log     []string    // guarded by mu: the server's log lines
	// defaultReuse is the n_cache_reuse of requests that send none:
	// --cache-reuse, 0 when the model cannot shift.
	defaultReuse int
	loaded       bool // guarded by mu: Ollama / LM Studio model loaded
	loading      bool // guarded by mu: llama.cpp is loading its model

	tokenizeCalls int // guarded by mu
}

// New starts a fake engine on a loopback port. Close it when done.
func New(opts Options) *Server {
	s := newServer(opts)
	s.ts = httptest.NewServer(s)
	return s
}

// Listen starts a fake engine on addr (host:port; port 0 picks one).
func Listen(opts Options, addr string) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := newServer(opts)
	s.ts = httptest.NewUnstartedServer(s)
	s.ts.Listener.Close()
	s.ts.Listener = l
	s.ts.Start()
	return s, nil
}

func newServer(opts Options) *Server {
	if opts.Shape == "" {
		opts.Shape = ShapeLlamaCpp
	}
	if !slices.Contains(Shapes, opts.Shape) {
		panic("enginetest: unknown shape " + opts.Shape)
	}
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	if opts.TrainedWindow <= 0 {
		opts.TrainedWindow = 4 * opts.Window
	}
	if opts.Model == "" {
		opts.Model = DefaultModel
	}
	if opts.CodeCharsPerToken > 0 {
		opts.CharsPerToken = proseForCode(opts.CodeCharsPerToken)
	}
	if opts.CharsPerToken <= 0 {
		opts.CharsPerToken = DefaultCharsPerToken
	}
	if opts.PromptMSPerToken <= 0 {
		opts.PromptMSPerToken = DefaultPromptMSPerToken
	}
	s := &Server{
		opts:         opts,
		tok:          newTokenizer(opts.CharsPerToken),
		script:       opts.Script,
		loaded:       !opts.Unloaded,
		loading:      opts.Loading,
		defaultReuse: max(opts.CacheReuse, 0),
	}
	s.cache = s.newCache()
	if s.isLlama() && opts.CacheReuse > 0 && opts.NoShift {
		s.log = append(s.log, "srv load_model: cache_reuse is not supported by this context, it will be disabled")
		s.defaultReuse = 0
	}
	return s
}

// newCache is an empty cache of the server's slots.
func (s *Server) newCache() promptCache {
	if !s.isLlama() {
		return newPromptCache(1, false, 0)
	}
	c := newPromptCache(s.slotCount(), !s.opts.NoHostCache, s.opts.HostCacheTokens)
	c.unified = s.opts.KVUnified
	return c
}

// DefaultSlots is llama-server's slot count when -np is not given.
const DefaultSlots = 4

// logf adds a line to the server's log. The lock must be held.
func (s *Server) logf(format string, args ...any) {
	s.log = append(s.log, fmt.Sprintf(format, args...))
}

// Log is what the server logged, one line a message, in llama-server's
// words where it has them: chunks reused, chunk reuse refused.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.log, "\n")
}

// URL is the OpenAI-compatible base URL, ending in /v1.
func (s *Server) URL() string { return s.ts.URL + "/v1" }

// RootURL is the server's root URL (where /props and /api/... live).
func (s *Server) RootURL() string { return s.ts.URL }

// Options are the server's options with defaults filled in.
func (s *Server) Options() Options { return s.opts }

// Close shuts the server down, closing its connections.
func (s *Server) Close() {
	s.ts.CloseClientConnections()
	s.ts.Close()
}

// SetScript replaces the script for the requests that follow.
func (s *Server) SetScript(sc Script) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = sc
}

// Requests returns every chat completion request so far, in order.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.records)
}

// Calls returns "METHOD /path" of every HTTP request so far, in order.
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// ResetSlot empties slot 0, as another prompt taking it would: its state
// goes to host memory (when on), as llama-server saves a slot it gives
// away.
func (s *Server) ResetSlot() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cache.evict(0)
}

// Restart forgets every cached prompt, the slots' and those in host
// memory, as a restarted server has none.
func (s *Server) Restart() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cache = s.newCache()
}

// SetLoading puts a llama.cpp shape in or out of loading its model: while
// loading, every route answers 503 "Loading model".
func (s *Server) SetLoading(loading bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loading = loading
}

// Tokens is the length of text in the fake's tokenization.
func (s *Server) Tokens(text string) int { return s.tok.Count(text) }

// PromptTokens is the length of the prompt the fake renders for messages
// and tools (each tool the compact JSON of its definition).
func (s *Server) PromptTokens(tools []string, msgs []ctxwin.Message) int {
	return s.tok.Count(renderPrompt(tools, msgs))
}
