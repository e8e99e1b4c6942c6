package enginetest

import (
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// The fake's chat template is ChatML-like, in the manner of the Qwen
// templates llama.cpp and vLLM apply: the system message, the tool
// definitions, then every other message between role markers, then the
// generation prompt. An assistant message renders its reasoning_content
// inside <think> tags (so keeping reasoning in the history costs tokens; a
// reply whose reasoning is dropped renders as what followed the tags, a
// pure deletion) and its tool calls as <tool_call> blocks carrying the
// arguments text verbatim (so re-serialised arguments change the prompt, as
// they do on a real engine). Tool call ids are not rendered, as in most
// open-weight templates.
const (
	markStart = "<|im_start|>"
	markEnd   = "<|im_end|>"
)

// renderPrompt renders the prompt of a request: the system message (when
// the first), the tools (each the compact JSON the client sent), the other
// messages, and the generation prompt. The system message comes first, as
// Qwen's templates write it before the tool signatures: two requests with
// different system messages diverge at their first tokens.
func renderPrompt(tools []string, msgs []ctxwin.Message) string {
	var b strings.Builder
	if len(msgs) > 0 && msgs[0].Role == ctxwin.RoleSystem {
		renderMessage(&b, msgs[0])
		msgs = msgs[1:]
	}
	if len(tools) > 0 {
		b.WriteString(markStart + "tools\n# Tools\n<tools>\n")
		for _, t := range tools {
			b.WriteString(t)
			b.WriteByte('\n')
		}
		b.WriteString("</tools>" + markEnd + "\n")
	}
	for _, m := range msgs {
		renderMessage(&b, m)
	}
	b.WriteString(markStart + "assistant\n")
	return b.String()
}

func renderMessage(b *strings.Builder, m ctxwin.Message) {
	b.WriteString(markStart)
	b.WriteString(m.Role)
	b.WriteByte('\n')
	switch m.Role {
	case ctxwin.RoleAssistant:
		b.WriteString(assistantBody(m, tojson))
	case ctxwin.RoleTool:
		b.WriteString("<tool_response>\n")
		b.WriteString(m.Content)
		b.WriteString("\n</tool_response>")
	default:
		b.WriteString(m.Content)
	}
	b.WriteString(markEnd + "\n")
}

// generatedBody is the text a model generates for a reply after the
// generation prompt: reasoning, content, tool calls with their arguments as
// the model wrote them.
func generatedBody(m ctxwin.Message) string {
	return assistantBody(m, func(s string) string { return s })
}

// assistantBody renders an assistant message after its role marker:
// reasoning, content, tool calls, each call's arguments passed through
// args. In the history the template re-serialises them (tojson), as
// Qwen's templates do, so arguments the model wrote in another spelling
// (`{"path":"a"}` for `{"path": "a"}`) end the reuse of its reply there.
func assistantBody(m ctxwin.Message, args func(string) string) string {
	var b strings.Builder
	if m.Reasoning != "" {
		b.WriteString("<think>\n")
		b.WriteString(m.Reasoning)
		b.WriteString("\n</think>\n\n")
	}
	b.WriteString(m.Content)
	for i, c := range m.ToolCalls {
		// As in Qwen3's template, a call follows what comes before it on a
		// new line, and the first of a reply without content opens it: a
		// reply whose reasoning is dropped from the history then renders
		// as its text did after the reasoning.
		if i > 0 || m.Content != "" {
			b.WriteByte('\n')
		}
		b.WriteString("<tool_call>\n{\"name\": \"")
		b.WriteString(c.Name)
		b.WriteString("\", \"arguments\": ")
		a := c.Arguments
		if a == "" {
			a = "{}"
		}
		b.WriteString(args(a))
		b.WriteString("}\n</tool_call>")
	}
	return b.String()
}

// tojson re-serialises JSON text the way Jinja's tojson (Python's
// json.dumps) writes it: ", " between items, ": " after keys, keys in their
// order. Text that is not JSON passes unchanged.
func tojson(text string) string {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var b strings.Builder
	if err := writeJSONValue(&b, dec); err != nil {
		return text
	}
	if _, err := dec.Token(); err != io.EOF {
		return text
	}
	return b.String()
}

func writeJSONValue(b *strings.Builder, dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		closer := json.Delim('}')
		if t == '[' {
			closer = ']'
		}
		b.WriteRune(rune(t))
		for first := true; dec.More(); first = false {
			if !first {
				b.WriteString(", ")
			}
			if t == '{' {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				b.WriteString(jsonString(k.(string)))
				b.WriteString(": ")
			}
			if err := writeJSONValue(b, dec); err != nil {
				return err
			}
		}
		if end, err := dec.Token(); err != nil || end != closer {
			return errors.New("unbalanced JSON")
		}
		b.WriteRune(rune(closer))
	case string:
		b.WriteString(jsonString(t))
	case json.Number:
		b.WriteString(t.String())
	case bool:
		if t {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case nil:
		b.WriteString("null")
	}
	return nil
}

// jsonString quotes s as JSON without escaping <, > and &.
func jsonString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
