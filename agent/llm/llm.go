// Package llm is the contract between the agent and a language model: the
// Model interface and the optional ones a Model may implement (LoadWatcher,
// TokenCounter), a request and its response, what is known of the model and
// its window (ModelInfo, the window sources), the engine errors the agent
// acts on (OverflowError, UnreachableError) and where a model is by
// default. Package agent consumes it; agent/engine implements it over HTTP;
// nothing here knows of sessions, tools or editors. It imports only the
// standard library and ctxwin's message types.
package llm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// Model is the language model the agent talks to. Package agent/engine
// implements it over OpenAI-compatible HTTP endpoints; tests use
// agent/enginetest behind the same implementation.
type Model interface {
	// Info reports the model's name and its context window, discovered once
	// and cached. A Model that cannot learn the window returns Window 0 and
	// WindowSource "none" with the reason in Reason; Info returns an error
	// only when the engine cannot be reached at all.
	Info(ctx context.Context) (ModelInfo, error)
	// Complete sends one chat completion request. onDelta, if not nil,
	// receives streamed text as it arrives (never concurrently). The
	// returned error is an *OverflowError when the engine rejected the
	// request as too long for its window, an *UnreachableError when it could
	// not be reached, and another error otherwise.
	Complete(ctx context.Context, req *Request, onDelta func(Delta)) (*Response, error)
}

// LoadWatcher is implemented by a Model that waits for an engine busy
// loading its model (llama-server answers 503 "Loading model" until it is
// ready) instead of failing. The agent calls WatchLoading once, before any
// Info or Complete; the Model calls f(true) when it starts waiting and
// f(false) when the engine answers again, from whichever goroutine asked.
type LoadWatcher interface {
	WatchLoading(f func(loading bool))
}

// DownWatcher is implemented by a Model that waits for an engine that
// stopped answering (connection refused or reset, 502, 503, 504) instead of
// failing at once. The agent calls WatchDown once, before any Info or
// Complete; the Model calls f(true) when a request starts waiting for the
// engine and f(false) when the wait ends (the engine answered, or the
// Model gave up), from whichever goroutine asked.
type DownWatcher interface {
	WatchDown(f func(down bool))
}

// Prober is implemented by a Model that can ask its engine whether it
// answers at all, past any cached discovery: Probe makes one request and
// returns an *UnreachableError (or another error) when the engine does not
// answer.
type Prober interface {
	Probe(ctx context.Context) error
}

// TokenCounter is implemented by a Model whose engine has a tokenizer
// endpoint (llama.cpp's and vLLM's POST /tokenize). The agent counts the
// texts new to each request with it, in one call per round, and prices them
// by the estimate when the Model does not implement it, answers
// ErrNoTokenizer, or fails.
type TokenCounter interface {
	// CountTokens counts each text with the engine's tokenizer, in one
	// request. It returns ErrNoTokenizer (possibly wrapped) when the engine
	// has no tokenizer endpoint.
	CountTokens(ctx context.Context, texts []string) ([]int, error)
}

// PromptCounter is implemented by a Model that can count a whole request
// as the engine will render it: its messages and tool definitions through
// the model's chat template (llama.cpp's POST /apply-template, then POST
// /tokenize). The agent counts a session's first request with it, whose
// tool definitions and template no engine has reported on yet.
type PromptCounter interface {
	// CountPrompt returns the prompt tokens req will take. It returns
	// ErrNoTokenizer (possibly wrapped) when the engine cannot render and
	// count a request.
	CountPrompt(ctx context.Context, req *Request) (int, error)
}

// ErrNoTokenizer says the engine has no tokenizer endpoint (hosted
// endpoints, Ollama, LM Studio).
var ErrNoTokenizer = errors.New("the engine has no tokenizer endpoint")

// Where a model is when nothing says otherwise: a llama-server on this
// machine, and the catalog of models' windows.
const (
	DefaultBaseURL   = "http://127.0.0.1:8080/v1"
	DefaultModelsURL = "https://models.dev/api.json"
)

// Window sources, as shown in the status item (docs/protocol.md).
const (
	SourceSetting  = "setting"
	SourceEndpoint = "endpoint"
	SourceCatalog  = "catalog"
	SourceOverflow = "overflow"
	SourceNone     = "none"
)

// ModelInfo is what the agent knows of the model and its window.
type ModelInfo struct {
	Model        string // model id sent in requests
	Window       int    // context window in tokens; 0 when unknown
	WindowSource string // one of the Source constants
	OutputLimit  int    // the model's output limit when a catalog lists it; 0 when unknown
	Engine       string // "llama.cpp", "vllm", "ollama", "lmstudio", "openai", "" when unknown
	Reason       string // why the window is unknown, when it is
}

// Request is one chat completion request.
type Request struct {
	Messages []ctxwin.Message
	Tools    []ctxwin.ToolSpec
	// ToolChoice is "" (auto) or "none" (the note round).
	ToolChoice string
	// MaxTokens caps the completion; 0 leaves it to the server.
	MaxTokens int
	// Subagent says the request is a subagent's, not the session's own. An
	// engine that keeps a cached prompt per slot serves it from a slot other
	// than the session's, so that the session's cache survives it.
	Subagent bool
}

// Delta is one streamed piece of a reply.
type Delta struct {
	Content   string
	Reasoning string
	// Retract says that the text streamed so far is void: the attempt that
	// streamed it broke off and the reply is asked for again, its text
	// streamed anew. A Retract delta carries no text.
	Retract bool
}

// Response is a finished completion.
type Response struct {
	Message      ctxwin.Message // role assistant: content, reasoning, tool calls
	FinishReason string         // "stop", "length", "tool_calls", ...
	// Usage is nil when the engine reported none. Missing usage is never zero.
	Usage *Usage
	// Timings are llama.cpp's prompt-processing figures; nil elsewhere.
	Timings *Timings
	// Elapsed is the wall time of the request.
	Elapsed time.Duration
	// CacheReuse is the smallest chunk, in tokens, the request asked the
	// engine to reuse from its cache beyond the common prefix (llama.cpp
	// n_cache_reuse); 0 when it asked for none.
	CacheReuse int
}

// Usage is the token accounting an engine reported.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	// CachedTokens is the prompt tokens served from the prefix cache;
	// CachedKnown says whether the engine reported it at all.
	CachedTokens int
	CachedKnown  bool
}

// Timings are llama.cpp's per-request figures (timings.cache_n, prompt_n,
// prompt_ms).
type Timings struct {
	CacheN   int
	PromptN  int
	PromptMS float64
}

// OverflowError is the engine's refusal of a prompt too long for its window,
// in any engine's shape. Window and PromptTokens are 0 when the engine did
// not state them.
type OverflowError struct {
	PromptTokens int
	Window       int
	Message      string
}

func (e *OverflowError) Error() string {
	if e.Window > 0 {
		return fmt.Sprintf("context overflow: prompt of %d tokens exceeds the window of %d tokens: %s", e.PromptTokens, e.Window, e.Message)
	}
	return "context overflow: " + e.Message
}

// UnreachableError says the engine could not be reached at all.
type UnreachableError struct {
	URL  string
	Hint string
	Err  error
}

func (e *UnreachableError) Error() string {
	s := "engine unreachable at " + e.URL
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// IsOverflow reports whether err is an *OverflowError.
func IsOverflow(err error) bool {
	var o *OverflowError
	return errors.As(err, &o)
}
