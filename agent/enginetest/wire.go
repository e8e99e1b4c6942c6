package enginetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// wireRequest is the part of a chat completion request body the fake reads.
type wireRequest struct {
	Model               string            `json:"model"`
	Messages            []wireMessage     `json:"messages"`
	Tools               []json.RawMessage `json:"tools"`
	ToolChoice          json.RawMessage   `json:"tool_choice"`
	MaxTokens           *int              `json:"max_tokens"`
	MaxCompletionTokens *int              `json:"max_completion_tokens"`
	NPredict            *int              `json:"n_predict"`
	Stream              bool              `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage json.RawMessage `json:"include_usage"`
	} `json:"stream_options"`
	CachePrompt *bool `json:"cache_prompt"`
	CacheReuse  *int  `json:"n_cache_reuse"`
	IDSlot      *int  `json:"id_slot"`
}

type wireMessage struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	ReasoningContent string          `json:"reasoning_content"`
	Reasoning        string          `json:"reasoning"`
	ToolCalls        []wireToolCall  `json:"tool_calls"`
	ToolCallID       string          `json:"tool_call_id"`
}

type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type wireTool struct {
	Type     string `json:"type"`
	Function *struct {
		Name string `json:"name"`
	} `json:"function"`
}

// parsedRequest is a request parsed from the wire, with the compact JSON of
// each tool for the template.
type parsedRequest struct {
	Request
	toolJSON []string
}

// parseRequest parses a chat completion request body. Its errors are what
// the engine answers with a 400.
func parseRequest(body []byte) (*parsedRequest, error) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("invalid JSON in request body: %v", err)
	}
	if len(w.Messages) == 0 {
		return nil, errors.New("'messages' must be a non-empty array")
	}
	p := &parsedRequest{}
	r := &p.Request
	r.Model = w.Model
	r.Stream = w.Stream
	r.CachePrompt = w.CachePrompt
	r.CacheReuse, r.IDSlot = w.CacheReuse, w.IDSlot
	if w.StreamOptions != nil {
		// llama.cpp: a non-bool include_usage silently means false.
		r.IncludeUsage = string(bytes.TrimSpace(w.StreamOptions.IncludeUsage)) == "true"
	}
	for _, n := range []*int{w.MaxTokens, w.MaxCompletionTokens, w.NPredict} {
		if n != nil && *n > 0 {
			r.MaxTokens = *n
			break
		}
	}
	choice, err := parseToolChoice(w.ToolChoice)
	if err != nil {
		return nil, err
	}
	r.ToolChoice = choice
	for i, raw := range w.Tools {
		var t wireTool
		if err := json.Unmarshal(raw, &t); err != nil || t.Function == nil || t.Function.Name == "" {
			return nil, fmt.Errorf("tools[%d]: want {\"type\":\"function\",\"function\":{\"name\":...}}", i)
		}
		var c bytes.Buffer
		if err := json.Compact(&c, raw); err != nil {
			return nil, fmt.Errorf("tools[%d]: %v", i, err)
		}
		r.Tools = append(r.Tools, t.Function.Name)
		p.toolJSON = append(p.toolJSON, c.String())
	}
	for i, wm := range w.Messages {
		m, err := parseMessage(wm)
		if err != nil {
			return nil, fmt.Errorf("messages[%d]: %v", i, err)
		}
		r.Messages = append(r.Messages, m)
	}
	return p, nil
}

func parseMessage(wm wireMessage) (ctxwin.Message, error) {
	m := ctxwin.Message{Role: wm.Role, ToolCallID: wm.ToolCallID}
	switch wm.Role {
	case ctxwin.RoleSystem, ctxwin.RoleUser, ctxwin.RoleAssistant, ctxwin.RoleTool, "developer":
	case "":
		return m, errors.New("missing 'role'")
	default:
		return m, fmt.Errorf("unknown role %q", wm.Role)
	}
	content, err := parseContent(wm.Content)
	if err != nil {
		return m, err
	}
	m.Content = content
	m.Reasoning = wm.ReasoningContent
	if m.Reasoning == "" {
		m.Reasoning = wm.Reasoning
	}
	for j, c := range wm.ToolCalls {
		if c.Function.Name == "" {
			return m, fmt.Errorf("tool_calls[%d]: missing function name", j)
		}
		args, err := argumentsText(c.Function.Arguments)
		if err != nil {
			return m, fmt.Errorf("tool_calls[%d]: %v", j, err)
		}
		m.ToolCalls = append(m.ToolCalls, ctxwin.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: args})
	}
	if wm.Role != ctxwin.RoleAssistant && len(wm.ToolCalls) > 0 {
		return m, errors.New("only assistant messages carry tool_calls")
	}
	if wm.Role == ctxwin.RoleAssistant && len(wm.Content) == 0 && len(wm.ToolCalls) == 0 && m.Reasoning == "" {
		return m, errors.New("assistant message needs content or tool_calls")
	}
	if wm.Role != ctxwin.RoleAssistant && len(bytes.TrimSpace(wm.Content)) == 0 {
		return m, errors.New("missing 'content'")
	}
	return m, nil
}

// parseContent reads a string, null, or an array of content parts (the text
// parts joined).
func parseContent(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", fmt.Errorf("content: %v", err)
		}
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				b.WriteString(p.Text)
			}
		}
		return b.String(), nil
	}
	return "", errors.New("content: want a string, null or an array of parts")
}

// argumentsText is a tool call's arguments as JSON text: the string as
// sent, or the compact JSON of an object.
func argumentsText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var c bytes.Buffer
	if err := json.Compact(&c, raw); err != nil {
		return "", fmt.Errorf("arguments: %v", err)
	}
	return c.String(), nil
}

func parseToolChoice(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("tool_choice: %v", err)
		}
		return s, nil
	}
	var obj struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil || obj.Function.Name == "" {
		return "", errors.New("tool_choice: want a string or {\"type\":\"function\",\"function\":{\"name\":...}}")
	}
	return obj.Function.Name, nil
}

// OpenAI's words for a broken tool-call pairing, verbatim.
const (
	orphanResult    = "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'"
	unansweredCalls = "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
)

// checkToolPairs reports the first tool result that answers no call of the
// assistant message before it, or a call left unanswered, in the words
// OpenAI uses.
func checkToolPairs(msgs []ctxwin.Message) error {
	pending := map[string]bool{} // ids of the last assistant's calls not yet answered
	inTools := false
	for i, m := range msgs {
		switch m.Role {
		case ctxwin.RoleTool:
			if !inTools || !pending[m.ToolCallID] {
				return fmt.Errorf("%s (messages[%d], tool_call_id %q)", orphanResult, i, m.ToolCallID)
			}
			delete(pending, m.ToolCallID)
			continue
		}
		if len(pending) > 0 {
			return errors.New(unansweredCalls + strings.Join(sortedKeys(pending), ", "))
		}
		inTools = false
		if m.Role == ctxwin.RoleAssistant && len(m.ToolCalls) > 0 {
			inTools = true
			for _, c := range m.ToolCalls {
				pending[c.ID] = true
			}
		}
	}
	if len(pending) > 0 {
		return errors.New(unansweredCalls + strings.Join(sortedKeys(pending), ", "))
	}
	return nil
}
