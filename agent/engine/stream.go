package engine

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// chunk is one parsed stream chunk: go-openai's view of it plus the extras
// it drops.
type chunk struct {
	resp openai.ChatCompletionStreamResponse
	x    extras
}

// parseChunk parses the JSON of one `data:` line.
func parseChunk(raw []byte) (chunk, error) {
	var c chunk
	if err := json.Unmarshal(raw, &c.resp); err != nil {
		return c, fmt.Errorf("malformed stream chunk: %v", err)
	}
	c.x = parseExtras(raw)
	return c, nil
}

// accumulator builds a reply from stream chunks: content and reasoning kept
// apart, tool calls assembled by index, and the usage and timings from
// whichever chunk carries them.
type accumulator struct {
	content, reasoning strings.Builder
	calls              map[int]*ctxwin.ToolCall
	lastCall           int // index of the call the last unindexed delta went to
	finish             string
	usage              *usageJSON
	timings            *timingsJSON
}

func newAccumulator() *accumulator {
	return &accumulator{calls: map[int]*ctxwin.ToolCall{}, lastCall: -1}
}

// add takes one chunk, passing its text to onDelta.
func (a *accumulator) add(c chunk, onDelta func(llm.Delta)) {
	if c.x.Usage != nil && c.x.Usage.PromptTokens.Valid {
		a.usage = c.x.Usage
	}
	if c.x.Timings != nil {
		a.timings = c.x.Timings
	}
	if len(c.resp.Choices) == 0 {
		return
	}
	// One choice is asked for; others are ignored.
	ch := c.resp.Choices[0]
	for _, alt := range c.resp.Choices {
		if alt.Index == 0 {
			ch = alt
			break
		}
	}
	d := ch.Delta
	reasoning := d.ReasoningContent
	if reasoning == "" {
		reasoning = c.x.reasoning() // vLLM, Ollama: "reasoning"
	}
	if reasoning != "" || d.Content != "" {
		a.reasoning.WriteString(reasoning)
		a.content.WriteString(d.Content)
		if onDelta != nil {
			onDelta(llm.Delta{Content: d.Content, Reasoning: reasoning})
		}
	}
	for _, tc := range d.ToolCalls {
		a.addCall(tc)
	}
	if f := string(ch.FinishReason); f != "" && f != string(openai.FinishReasonNull) {
		a.finish = f
	}
}

// addCall merges one tool-call delta: by its index, or, for engines that
// send none, into the last call unless it brings a new id.
func (a *accumulator) addCall(tc openai.ToolCall) {
	idx := -1
	switch {
	case tc.Index != nil && *tc.Index >= 0 && *tc.Index < 1<<16:
		idx = *tc.Index
	case a.lastCall >= 0 && (tc.ID == "" || tc.ID == a.calls[a.lastCall].ID):
		idx = a.lastCall
	default:
		idx = len(a.calls)
		for a.calls[idx] != nil {
			idx++
		}
	}
	call := a.calls[idx]
	if call == nil {
		call = &ctxwin.ToolCall{}
		a.calls[idx] = call
	}
	a.lastCall = idx
	if tc.ID != "" {
		call.ID = tc.ID
	}
	if tc.Function.Name != "" {
		call.Name = tc.Function.Name
	}
	call.Arguments += tc.Function.Arguments
}

// message is the assembled assistant message, its tool calls in index
// order, each with an id.
func (a *accumulator) message() ctxwin.Message {
	m := ctxwin.Message{Role: ctxwin.RoleAssistant, Content: a.content.String(), Reasoning: a.reasoning.String()}
	keys := make([]int, 0, len(a.calls))
	for k := range a.calls {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		m.ToolCalls = append(m.ToolCalls, *a.calls[k])
	}
	fillCallIDs(m.ToolCalls)
	return m
}

// fillCallIDs gives every call without an id a fresh one.
func fillCallIDs(calls []ctxwin.ToolCall) {
	for i := range calls {
		if calls[i].ID == "" {
			var b [12]byte
			rand.Read(b[:])
			calls[i].ID = "call_" + hex.EncodeToString(b[:])
		}
	}
}

// usageOf converts what the engine reported into llm.Usage: nil when it
// reported nothing. llama.cpp timings stand in for missing usage or cached
// counts (cache_n is the cached tokens; prompt = cache_n + prompt_n).
func usageOf(u *usageJSON, t *timingsJSON) *llm.Usage {
	var out *llm.Usage
	if u != nil && u.PromptTokens.Valid {
		out = &llm.Usage{PromptTokens: u.PromptTokens.N, CompletionTokens: u.CompletionTokens.N}
		switch {
		case u.PromptTokensDetails != nil && u.PromptTokensDetails.CachedTokens.Valid:
			out.CachedTokens, out.CachedKnown = u.PromptTokensDetails.CachedTokens.N, true
		case u.PromptCacheHitTokens.Valid:
			out.CachedTokens, out.CachedKnown = u.PromptCacheHitTokens.N, true
		}
	}
	if t != nil && t.CacheN.Valid && t.PromptN.Valid {
		if out == nil {
			out = &llm.Usage{PromptTokens: t.CacheN.N + t.PromptN.N, CompletionTokens: t.PredictedN.N}
		}
		if !out.CachedKnown {
			out.CachedTokens, out.CachedKnown = t.CacheN.N, true
		}
	}
	return out
}

// timingsOf converts llama.cpp timings; nil when there were none.
func timingsOf(t *timingsJSON) *llm.Timings {
	if t == nil || !t.CacheN.Valid && !t.PromptN.Valid {
		return nil
	}
	return &llm.Timings{CacheN: t.CacheN.N, PromptN: t.PromptN.N, PromptMS: t.PromptMS.F}
}
