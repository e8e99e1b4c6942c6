package enginetest

import (
	"strings"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// The fake's chat template is ChatML-like, in the manner of the Qwen
// templates llama.cpp and vLLM apply: the tool definitions first, then every
// message between role markers, then the generation prompt. An assistant
// message renders its reasoning_content inside <think> tags (so keeping
// reasoning in the history costs tokens) and its tool calls as <tool_call>
// blocks carrying the arguments text verbatim (so re-serialised arguments
// change the prompt, as they do on a real engine). Tool call ids are not
// rendered, as in most open-weight templates.
const (
	markStart = "<|im_start|>"
	markEnd   = "<|im_end|>"
)

// renderPrompt renders the prompt of a request: tools (each the compact JSON
// the client sent), messages, and the generation prompt.
func renderPrompt(tools []string, msgs []ctxwin.Message) string {
	var b strings.Builder
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
		b.WriteString(assistantBody(m))
	case ctxwin.RoleTool:
		b.WriteString("<tool_response>\n")
		b.WriteString(m.Content)
		b.WriteString("\n</tool_response>")
	default:
		b.WriteString(m.Content)
	}
	b.WriteString(markEnd + "\n")
}

// assistantBody is what follows the generation prompt for an assistant
// message: reasoning, content, tool calls. The slot keeps the reply rendered
// this way, followed by the end marker, as the next prompt would hold it.
func assistantBody(m ctxwin.Message) string {
	var b strings.Builder
	if m.Reasoning != "" {
		b.WriteString("<think>\n")
		b.WriteString(m.Reasoning)
		b.WriteString("\n</think>\n\n")
	}
	b.WriteString(m.Content)
	for _, c := range m.ToolCalls {
		b.WriteString("\n<tool_call>\n{\"name\": \"")
		b.WriteString(c.Name)
		b.WriteString("\", \"arguments\": ")
		args := c.Arguments
		if args == "" {
			args = "{}"
		}
		b.WriteString(args)
		b.WriteString("}\n</tool_call>")
	}
	return b.String()
}
