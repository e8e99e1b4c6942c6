package main

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// counter counts a request's prompt tokens exactly as the fake engine
// will: its tokenizer starts afresh at every chat-template marker, so a
// prompt's tokens are the sum of its parts' (the tool block, each
// message, the generation prompt). Each message is tokenized once.
type counter struct {
	srv      *enginetest.Server
	toolJSON []string
	tools    int // the tool block's tokens
	gen      int // the generation prompt's tokens
	memo     map[string]int
}

func newCounter(srv *enginetest.Server, toolJSON []string) *counter {
	c := &counter{srv: srv, toolJSON: toolJSON, memo: map[string]int{}}
	c.gen = srv.PromptTokens(nil, nil)
	c.tools = srv.PromptTokens(toolJSON, nil) - c.gen
	return c
}

// message is the tokens of one message as the template renders it.
func (c *counter) message(m ctxwin.Message) int {
	var k bytes.Buffer
	k.WriteString(m.Role)
	k.WriteByte(0)
	k.WriteString(m.Content)
	k.WriteByte(0)
	k.WriteString(m.Reasoning)
	for _, tc := range m.ToolCalls {
		k.WriteByte(0)
		k.WriteString(tc.Name)
		k.WriteByte(0)
		k.WriteString(tc.Arguments)
	}
	key := k.String()
	if n, ok := c.memo[key]; ok {
		return n
	}
	n := c.srv.PromptTokens(nil, []ctxwin.Message{m}) - c.gen
	c.memo[key] = n
	return n
}

// prompt is the prompt tokens of a request of msgs, with or without the
// tool definitions.
func (c *counter) prompt(msgs []ctxwin.Message, tools bool) int {
	n := c.gen
	if tools {
		n += c.tools
	}
	for _, m := range msgs {
		n += c.message(m)
	}
	return n
}

// toolJSON is the tool definitions of a request body as the fake's
// template renders them: each tool's compact JSON.
func toolJSON(body []byte) ([]string, error) {
	var req struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("request body: %w", err)
	}
	var out []string
	for _, t := range req.Tools {
		var b bytes.Buffer
		if err := json.Compact(&b, t); err != nil {
			return nil, err
		}
		out = append(out, b.String())
	}
	return out, nil
}
