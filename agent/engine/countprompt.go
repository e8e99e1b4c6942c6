package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/reika-lsp/reika-lsp/agent/llm"
)

var _ llm.PromptCounter = (*Client)(nil)

// CountPrompt counts the prompt req renders to on llama.cpp: POST
// /apply-template renders its messages and tools with the model's chat
// template (with the generation prompt), as a chat request would be, and
// POST /tokenize counts the result with the special tokens a completion
// adds. Other engines, and a llama-server without the two endpoints,
// answer llm.ErrNoTokenizer; see llm.PromptCounter.
func (c *Client) CountPrompt(ctx context.Context, req *llm.Request) (int, error) {
	info, err := c.ensureInfo(ctx)
	if err != nil {
		return 0, c.red.error(err)
	}
	c.mu.Lock()
	off := c.noTokenize
	c.mu.Unlock()
	if off || info.Engine != EngineLlamaCpp {
		return 0, llm.ErrNoTokenizer
	}
	ctx, cancel := context.WithTimeout(ctx, tokenizeTimeout)
	defer cancel()
	body, err := json.Marshal(c.buildRequest(info.Model, req))
	if err != nil {
		return 0, err
	}
	b, err := c.do(ctx, http.MethodPost, c.rootURL+"/apply-template", body)
	var se *statusError
	if errors.As(err, &se) && (se.status == http.StatusNotFound || se.status == http.StatusMethodNotAllowed || se.status == http.StatusNotImplemented) {
		return 0, fmt.Errorf("%w (POST /apply-template: %v)", llm.ErrNoTokenizer, err)
	}
	if err != nil {
		return 0, c.red.error(fmt.Errorf("POST /apply-template: %w", err))
	}
	var tpl struct {
		Prompt *string `json:"prompt"`
	}
	if json.Unmarshal(b, &tpl) != nil || tpl.Prompt == nil {
		return 0, fmt.Errorf("POST /apply-template: the answer is not a prompt: %s", plainText(b))
	}
	body, _ = json.Marshal(map[string]any{"content": *tpl.Prompt, "add_special": true})
	b, err = c.do(ctx, http.MethodPost, c.rootURL+"/tokenize", body)
	if err != nil {
		return 0, c.red.error(fmt.Errorf("POST /tokenize: %w", err))
	}
	var tok struct {
		Tokens []json.RawMessage `json:"tokens"`
	}
	if err := json.Unmarshal(b, &tok); err != nil {
		return 0, fmt.Errorf("POST /tokenize: the answer is not a tokenization: %w", err)
	}
	return len(tok.Tokens), nil
}
