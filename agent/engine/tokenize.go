package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/reika-lsp/reika-lsp/agent/llm"
)

// Counting with the engine's tokenizer (llm.TokenCounter). llama.cpp
// answers POST /tokenize {"content": "…", "with_pieces": true} with
// {"tokens": [{"id": 1, "piece": "…"}, …]} (a piece that is not valid UTF-8
// comes as a list of bytes); vLLM answers POST /tokenize at the server root
// {"model": "…", "prompt": "…", "add_special_tokens": false} with {"count":
// n, "max_model_len": …, "tokens": […]}. The texts of one call go in one
// request, joined by newlines: llama.cpp's pieces say where each token
// starts, so every text gets its own count; vLLM's count is shared out over
// the texts by their bytes. Hosted endpoints, Ollama and LM Studio have no
// tokenizer endpoint; an engine that answers 404 (or 405, 501) is not asked
// again.

// tokenizeTimeout bounds one /tokenize request: counting is an
// optimisation, never worth holding a round up for.
const tokenizeTimeout = 5 * time.Second

var _ llm.TokenCounter = (*Client)(nil)

// CountTokens counts each text with the engine's tokenizer in one request;
// see llm.TokenCounter.
func (c *Client) CountTokens(ctx context.Context, texts []string) ([]int, error) {
	info, err := c.ensureInfo(ctx)
	if err != nil {
		return nil, c.red.error(err)
	}
	c.mu.Lock()
	off := c.noTokenize
	c.mu.Unlock()
	if off || info.Engine != EngineLlamaCpp && info.Engine != EngineVLLM {
		return nil, llm.ErrNoTokenizer
	}
	if len(texts) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, tokenizeTimeout)
	defer cancel()
	joined := strings.Join(texts, "\n")
	var counts []int
	if info.Engine == EngineLlamaCpp {
		counts, err = c.countLlama(ctx, texts, joined)
	} else {
		counts, err = c.countVLLM(ctx, info.Model, texts, joined)
	}
	var se *statusError
	if errors.As(err, &se) && (se.status == http.StatusNotFound || se.status == http.StatusMethodNotAllowed || se.status == http.StatusNotImplemented) {
		c.logf("engine: POST %s/tokenize answered HTTP %d; new text will be estimated", c.rootURL, se.status)
		c.mu.Lock()
		c.noTokenize = true
		c.mu.Unlock()
		return nil, fmt.Errorf("%w (POST /tokenize: %v)", llm.ErrNoTokenizer, err)
	}
	if err != nil {
		return nil, c.red.error(fmt.Errorf("POST /tokenize: %w", err))
	}
	return counts, nil
}

// countLlama asks llama.cpp for the pieces of the joined texts and counts
// the tokens that start in each text.
func (c *Client) countLlama(ctx context.Context, texts []string, joined string) ([]int, error) {
	body, _ := json.Marshal(map[string]any{"content": joined, "with_pieces": true})
	b, err := c.do(ctx, http.MethodPost, c.rootURL+"/tokenize", body)
	if err != nil {
		return nil, err
	}
	var resp struct {
		Tokens []json.RawMessage `json:"tokens"`
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		return nil, fmt.Errorf("the answer is not a tokenization: %w", err)
	}
	lengths := make([]int, len(resp.Tokens))
	total := 0
	for i, t := range resp.Tokens {
		lengths[i] = pieceLen(t)
		total += lengths[i]
	}
	if total == 0 {
		return shareByBytes(len(resp.Tokens), texts), nil
	}
	// Each token belongs to the text its first byte is in; a tokenizer that
	// adds or drops a byte here and there (a leading space) is scaled back
	// to the text's length.
	scale := float64(len(joined)) / float64(total)
	counts := make([]int, len(texts))
	k, end := 0, len(texts[0])
	at := 0.0
	for _, n := range lengths {
		for k < len(texts)-1 && int(at) >= end {
			k++
			end += 1 + len(texts[k])
		}
		counts[k]++
		at += float64(n) * scale
	}
	return counts, nil
}

// pieceLen is the byte length of one token of llama.cpp's with_pieces
// answer: {"id", "piece"} with the piece a string or a list of bytes, or a
// bare id (an older build that ignores with_pieces: length unknown, 0).
func pieceLen(raw json.RawMessage) int {
	var t struct {
		Piece json.RawMessage `json:"piece"`
	}
	if json.Unmarshal(raw, &t) != nil || len(t.Piece) == 0 {
		return 0
	}
	var s string
	if json.Unmarshal(t.Piece, &s) == nil {
		return len(s)
	}
	var bs []int
	if json.Unmarshal(t.Piece, &bs) == nil {
		return len(bs)
	}
	return 0
}

// countVLLM asks vLLM to count the joined texts and shares the count out.
func (c *Client) countVLLM(ctx context.Context, model string, texts []string, joined string) ([]int, error) {
	body, _ := json.Marshal(map[string]any{"model": model, "prompt": joined, "add_special_tokens": false})
	b, err := c.do(ctx, http.MethodPost, c.rootURL+"/tokenize", body)
	if err != nil {
		return nil, err
	}
	var resp struct {
		Count  *int              `json:"count"`
		Tokens []json.RawMessage `json:"tokens"`
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		return nil, fmt.Errorf("the answer is not a tokenization: %w", err)
	}
	n := len(resp.Tokens)
	if resp.Count != nil {
		n = *resp.Count
	}
	return shareByBytes(n, texts), nil
}

// shareByBytes shares total tokens out over texts in proportion to their
// bytes, at least one for a text that is not empty.
func shareByBytes(total int, texts []string) []int {
	bytes := 0
	for _, t := range texts {
		bytes += len(t)
	}
	out := make([]int, len(texts))
	for i, t := range texts {
		if bytes > 0 && t != "" {
			out[i] = max(int(math.Round(float64(total)*float64(len(t))/float64(bytes))), 1)
		}
	}
	return out
}
