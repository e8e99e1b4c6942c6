package engine

import (
	"context"
	"encoding/json"

	openai "github.com/sashabaranov/go-openai"

	"github.com/reika-lsp/reika-lsp/agent/llm"
)

// extraFields are the non-OpenAI fields of one chat request: llama.cpp's
// cache_prompt, n_cache_reuse and, on a server with several slots, id_slot
// (slots.go); nil for other engines. done is called when the request is
// over.
func (c *Client) extraFields(ctx context.Context, info llm.ModelInfo, req *llm.Request) (f map[string]any, done func()) {
	done = func() {}
	if info.Engine != EngineLlamaCpp {
		return nil, done
	}
	f = map[string]any{"cache_prompt": true}
	if n, ok := c.cacheReuse(info); ok {
		f["n_cache_reuse"] = n
	}
	slot, ok := 0, false
	if req.Subagent {
		slot, ok, done = c.subagentSlot(ctx, info)
	} else {
		slot, ok, done = c.sessionRequest(ctx, info)
	}
	if ok {
		f["id_slot"] = slot
	}
	return f, done
}

// fieldsKey is the context key of a request's extra fields.
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

// buildRequest converts the agent's request. Temperature is left unset;
// max_tokens is sent only when the request caps the completion.
func (c *Client) buildRequest(model string, req *llm.Request) openai.ChatCompletionRequest {
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
