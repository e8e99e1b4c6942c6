package engine

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// This file holds the parsers of what engines send back. Each takes bytes
// from the network and must accept anything without panicking (see
// fuzz_test.go); fields of an unexpected type are ignored rather than
// failing the whole document.

// optInt is a JSON number that tolerates the wrong type: a number (integral
// or not) or a numeric string sets it; anything else leaves it unset.
type optInt struct {
	N     int
	Valid bool
}

func (o *optInt) UnmarshalJSON(b []byte) error {
	*o = optInt{}
	b = bytes.TrimSpace(b)
	if len(b) > 1 && b[0] == '"' {
		b = b[1 : len(b)-1]
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f > math.MaxInt32*1024.0 || f < -math.MaxInt32*1024.0 {
		return nil
	}
	*o = optInt{N: int(f), Valid: true}
	return nil
}

// pos returns the value when it is set and positive.
func (o optInt) pos() (int, bool) { return o.N, o.Valid && o.N > 0 }

// optFloat is a JSON number that tolerates the wrong type.
type optFloat struct {
	F     float64
	Valid bool
}

func (o *optFloat) UnmarshalJSON(b []byte) error {
	*o = optFloat{}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(b)), 64)
	if err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		*o = optFloat{F: f, Valid: true}
	}
	return nil
}

// optString is a JSON string that tolerates the wrong type (a number
// becomes its text; anything else is unset).
type optString string

func (o *optString) UnmarshalJSON(b []byte) error {
	*o = ""
	b = bytes.TrimSpace(b)
	var s string
	if json.Unmarshal(b, &s) == nil {
		*o = optString(s)
		return nil
	}
	if _, err := strconv.ParseFloat(string(b), 64); err == nil {
		*o = optString(b)
	}
	return nil
}

// lenient decodes tolerant of a top-level type mismatch: it unmarshals the
// parts it can. It returns false when data is not JSON at all.
func lenient(data []byte, v any) bool {
	if !json.Valid(data) {
		return false
	}
	json.Unmarshal(data, v) // type mismatches leave fields unset
	return true
}

// --- GET /v1/models -------------------------------------------------------

// modelEntry is one entry of an OpenAI-style model listing, with the
// extensions engines add.
type modelEntry struct {
	ID      optString   `json:"id"`
	OwnedBy optString   `json:"owned_by"`
	Aliases []optString `json:"aliases"`
	Root    optString   `json:"root"`
	Parent  optString   `json:"parent"`
	// llama.cpp: meta.n_ctx is the per-slot window (2026 builds);
	// n_ctx_train is only the training context.
	Meta *struct {
		NCtx      optInt `json:"n_ctx"`
		NCtxTrain optInt `json:"n_ctx_train"`
	} `json:"meta"`
	// llama.cpp router mode.
	Status *struct {
		Value optString `json:"value"`
	} `json:"status"`
	// vLLM and SGLang.
	MaxModelLen optInt `json:"max_model_len"`
	// LM Studio (/api/v0/models).
	State               optString `json:"state"`
	LoadedContextLength optInt    `json:"loaded_context_length"`
	MaxContextLength    optInt    `json:"max_context_length"`
	// OpenRouter and other gateways.
	ContextLength optInt `json:"context_length"`
}

// modelListing is GET /v1/models.
type modelListing struct {
	Data []modelEntry `json:"data"`
	// llama.cpp 2026 adds an Ollama-style "models" list beside "data".
	Models json.RawMessage `json:"models"`
}

// parseModels parses a model listing. ok is false when the body is not a
// listing (not JSON, or no "data" array).
func parseModels(body []byte) (l modelListing, ok bool) {
	if !lenient(body, &l) {
		return modelListing{}, false
	}
	var probe struct {
		Data json.RawMessage `json:"data"`
	}
	json.Unmarshal(body, &probe)
	if !bytes.HasPrefix(bytes.TrimSpace(probe.Data), []byte("[")) {
		return modelListing{}, false
	}
	return l, true
}

// ids lists the model ids of a listing.
func (l modelListing) ids() []string {
	var out []string
	for _, e := range l.Data {
		if e.ID != "" {
			out = append(out, string(e.ID))
		}
	}
	return out
}

// find returns the entry whose id or alias is model; Ollama's bare names
// match their ":latest" tag.
func (l modelListing) find(model string) (modelEntry, bool) {
	for _, e := range l.Data {
		if string(e.ID) == model {
			return e, true
		}
	}
	for _, e := range l.Data {
		for _, a := range e.Aliases {
			if string(a) == model {
				return e, true
			}
		}
		if string(e.ID) == model+":latest" {
			return e, true
		}
	}
	return modelEntry{}, false
}

// loaded reports whether an entry says its model is loaded (llama.cpp router
// status, LM Studio state); unknown counts as loaded.
func (e modelEntry) loaded() bool {
	if e.Status != nil && e.Status.Value != "" {
		return e.Status.Value == "loaded"
	}
	if e.State != "" {
		return e.State == "loaded"
	}
	return true
}

// window returns the window an entry states and where it says it.
func (e modelEntry) window() (int, string) {
	if e.Meta != nil {
		if n, ok := e.Meta.NCtx.pos(); ok {
			return n, "meta.n_ctx"
		}
	}
	if n, ok := e.MaxModelLen.pos(); ok {
		return n, "max_model_len"
	}
	if n, ok := e.LoadedContextLength.pos(); ok {
		return n, "loaded_context_length"
	}
	if n, ok := e.ContextLength.pos(); ok {
		return n, "context_length"
	}
	return 0, ""
}

// --- llama.cpp GET /props ------------------------------------------------

// parseProps returns default_generation_settings.n_ctx of llama.cpp's
// /props (the per-slot window).
func parseProps(body []byte) (int, bool) {
	var p struct {
		Settings *struct {
			NCtx optInt `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if !lenient(body, &p) || p.Settings == nil {
		return 0, false
	}
	return p.Settings.NCtx.pos()
}

// --- Ollama ---------------------------------------------------------------

// parseOllamaPS returns the context_length of model in Ollama's /api/ps.
func parseOllamaPS(body []byte, model string) (int, bool) {
	var ps struct {
		Models []struct {
			Name          optString `json:"name"`
			Model         optString `json:"model"`
			ContextLength optInt    `json:"context_length"`
		} `json:"models"`
	}
	if !lenient(body, &ps) {
		return 0, false
	}
	for _, m := range ps.Models {
		for _, name := range []string{string(m.Name), string(m.Model)} {
			if name != "" && (name == model || name == model+":latest" || model == name+":latest") {
				return m.ContextLength.pos()
			}
		}
	}
	return 0, false
}

var numCtxRe = regexp.MustCompile(`(?m)^\s*num_ctx\s+(\d+)\s*$`)

// parseOllamaShow returns from Ollama's /api/show the num_ctx a Modelfile
// sets (the window the model runs with) and the trained context length
// (model_info["<arch>.context_length"]).
func parseOllamaShow(body []byte) (numCtx, trained int) {
	var show struct {
		Parameters optString                  `json:"parameters"`
		ModelInfo  map[string]json.RawMessage `json:"model_info"`
	}
	if !lenient(body, &show) {
		return 0, 0
	}
	if m := numCtxRe.FindStringSubmatch(string(show.Parameters)); m != nil {
		numCtx, _ = strconv.Atoi(m[1])
	}
	for k, v := range show.ModelInfo {
		if strings.HasSuffix(k, ".context_length") {
			var n optInt
			n.UnmarshalJSON(v)
			if x, ok := n.pos(); ok {
				trained = x
			}
		}
	}
	return max(numCtx, 0), trained
}

// --- LM Studio ------------------------------------------------------------

// parseLMStudioV0 returns, for model in LM Studio's /api/v0/models, its
// loaded_context_length (0 when not loaded) and max_context_length.
func parseLMStudioV0(body []byte, model string) (loaded, maxCtx int, found bool) {
	l, ok := parseModels(body)
	if !ok {
		return 0, 0, false
	}
	e, ok := l.find(model)
	if !ok {
		return 0, 0, false
	}
	loaded, _ = e.LoadedContextLength.pos()
	maxCtx, _ = e.MaxContextLength.pos()
	return loaded, maxCtx, true
}

// parseLMStudioV1 returns, for model in LM Studio 0.4's /api/v1/models, the
// context_length of its first loaded instance and its max_context_length.
func parseLMStudioV1(body []byte, model string) (loaded, maxCtx int, found bool) {
	var l struct {
		Models []struct {
			Key             optString `json:"key"`
			LoadedInstances []struct {
				Config struct {
					ContextLength optInt `json:"context_length"`
				} `json:"config"`
			} `json:"loaded_instances"`
			MaxContextLength optInt `json:"max_context_length"`
		} `json:"models"`
	}
	if !lenient(body, &l) {
		return 0, 0, false
	}
	for _, m := range l.Models {
		if string(m.Key) != model {
			continue
		}
		for _, in := range m.LoadedInstances {
			if n, ok := in.Config.ContextLength.pos(); ok {
				loaded = n
				break
			}
		}
		maxCtx, _ = m.MaxContextLength.pos()
		return loaded, maxCtx, true
	}
	return 0, 0, false
}

// --- usage and timings ----------------------------------------------------

// usageJSON is a usage object as any engine sends it.
type usageJSON struct {
	PromptTokens        optInt `json:"prompt_tokens"`
	CompletionTokens    optInt `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens optInt `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	// DeepSeek reports its cache this way.
	PromptCacheHitTokens optInt `json:"prompt_cache_hit_tokens"`
}

// timingsJSON is llama.cpp's timings object.
type timingsJSON struct {
	CacheN     optInt   `json:"cache_n"`
	PromptN    optInt   `json:"prompt_n"`
	PromptMS   optFloat `json:"prompt_ms"`
	PredictedN optInt   `json:"predicted_n"`
}

// extras are the fields of a response or a stream chunk that go-openai does
// not keep: usage as sent (to tell "not reported" from 0), llama.cpp
// timings, and reasoning under vLLM's and Ollama's name "reasoning".
type extras struct {
	Usage   *usageJSON   `json:"usage"`
	Timings *timingsJSON `json:"timings"`
	Choices []struct {
		Delta *struct {
			Reasoning optString `json:"reasoning"`
		} `json:"delta"`
		Message *struct {
			Reasoning optString `json:"reasoning"`
		} `json:"message"`
	} `json:"choices"`
}

func parseExtras(body []byte) extras {
	var x extras
	lenient(body, &x)
	return x
}

// reasoning returns the "reasoning" field of the first choice's delta or
// message.
func (x extras) reasoning() string {
	if len(x.Choices) == 0 {
		return ""
	}
	c := x.Choices[0]
	if c.Delta != nil {
		return string(c.Delta.Reasoning)
	}
	if c.Message != nil {
		return string(c.Message.Reasoning)
	}
	return ""
}

// --- error bodies ----------------------------------------------------------

// errorInfo is an engine's error response, in whichever of its shapes.
type errorInfo struct {
	Type, Code, Param, Message string
	// NPromptTokens and NCtx are llama.cpp's counts on an overflow; 0 when
	// absent.
	NPromptTokens, NCtx int
}

type errorObject struct {
	Message       json.RawMessage `json:"message"`
	Type          optString       `json:"type"`
	Code          optString       `json:"code"`
	Param         optString       `json:"param"`
	NPromptTokens optInt          `json:"n_prompt_tokens"`
	NCtx          optInt          `json:"n_ctx"`
	Object        optString       `json:"object"`
	Detail        json.RawMessage `json:"detail"`
	Error         json.RawMessage `json:"error"`
}

// parseErrorBody reads an error response body: {"error":{...}} (llama.cpp,
// vLLM, OpenAI, Ollama /v1), {"error":"text"} (Ollama native, LM Studio),
// the flat {"object":"error",...} of older vLLM, the bare object of
// llama.cpp's old streamed `error:` line, FastAPI's {"detail":...}, or any
// other text (an HTML page from a proxy).
func parseErrorBody(body []byte) errorInfo {
	body = bytes.TrimSpace(body)
	var top errorObject
	if !lenient(body, &top) {
		return errorInfo{Message: plainText(body)}
	}
	obj := top
	if e := bytes.TrimSpace(top.Error); len(e) > 0 {
		switch e[0] {
		case '{':
			var inner errorObject
			lenient(e, &inner)
			obj = inner
		case '"':
			var s string
			json.Unmarshal(e, &s)
			return errorInfo{Message: s}
		}
	}
	info := errorInfo{
		Type:  string(obj.Type),
		Code:  string(obj.Code),
		Param: string(obj.Param),
	}
	info.Message = messageText(obj.Message)
	if info.Message == "" {
		info.Message = messageText(obj.Detail)
	}
	if info.Message == "" && info.Type == "" && info.Code == "" {
		info.Message = plainText(body)
	}
	info.NPromptTokens, _ = obj.NPromptTokens.pos()
	info.NCtx, _ = obj.NCtx.pos()
	return info
}

// messageText reads a message that is a string, a list of strings, or a
// FastAPI detail list.
func messageText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		var parts []string
		for _, item := range list {
			if json.Unmarshal(item, &s) == nil {
				parts = append(parts, s)
				continue
			}
			var d struct {
				Msg optString `json:"msg"`
			}
			if json.Unmarshal(item, &d) == nil && d.Msg != "" {
				parts = append(parts, string(d.Msg))
			}
		}
		return strings.Join(parts, "; ")
	}
	return ""
}

var tagRe = regexp.MustCompile(`<[^>]*>`)

// plainText is a short, single-line rendering of a non-JSON body.
func plainText(b []byte) string {
	s := tagRe.ReplaceAllString(string(b), " ")
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return strings.ToValidUTF8(s, "?")
}

// Overflow phrasings and the numbers in them (docs/engines.md §6, §7.4).
var (
	overflowMsgRe = regexp.MustCompile(`(?i)context (length|size|window)|maximum context|prompt is too long|too many tokens|exceeds the available context|context the overflows|input tokens exceed|maximum prompt length|token count exceeds|input token count`)
	windowRes     = []*regexp.Regexp{
		regexp.MustCompile(`available context size \((\d+) tokens\)`),
		regexp.MustCompile(`(?i)maximum context length is (\d+)`),
		regexp.MustCompile(`(?i)model's context length is only (\d+)`),
		regexp.MustCompile(`(?i)context length of only (\d+)`),
		regexp.MustCompile(`(?i)maximum prompt length is (\d+)`),
		regexp.MustCompile(`(?i)context window of (\d+)`),
		regexp.MustCompile(`(\d+) maximum`),
	}
	promptRes = []*regexp.Regexp{
		regexp.MustCompile(`request \((\d+) tokens\)`),
		regexp.MustCompile(`(?i)prompt contains at least (\d+) input tokens`),
		regexp.MustCompile(`(?i)your messages resulted in (\d+) tokens`),
		regexp.MustCompile(`(?i)\((\d+) in the messages`),
		regexp.MustCompile(`(?i)you passed (\d+) input tokens`),
		regexp.MustCompile(`(?i)your request has (\d+) input tokens`),
		regexp.MustCompile(`(?i)keep the first (\d+) tokens`),
		regexp.MustCompile(`(?i)prompt is too long: (\d+) tokens`),
		regexp.MustCompile(`(?i)input token count \((\d+)\)`),
	}
)

// overflow decides whether an error response is a context overflow, and
// returns the prompt size and window it states (0 when it does not). status
// is the HTTP status, 0 for an error sent inside a stream.
func (e errorInfo) overflow(status int) (prompt, window int, ok bool) {
	switch {
	case e.Type == "exceed_context_size_error", e.Code == "context_length_exceeded":
		ok = true
	case status == 400 || status == 413 || status == 0:
		ok = e.Param == "input_tokens" || e.Param == "input_text" || overflowMsgRe.MatchString(e.Message)
	}
	if !ok {
		return 0, 0, false
	}
	prompt, window = e.NPromptTokens, e.NCtx
	if window == 0 {
		window = firstNumber(windowRes, e.Message)
	}
	if prompt == 0 {
		prompt = firstNumber(promptRes, e.Message)
	}
	return prompt, window, true
}

func firstNumber(res []*regexp.Regexp, s string) int {
	for _, re := range res {
		if m := re.FindStringSubmatch(s); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}
