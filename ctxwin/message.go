package ctxwin

import "encoding/json"

// Role of a message in a chat completion request.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one message of a rendered request, in the OpenAI chat shape.
// It is what the engine receives; the history view (History) renders a
// request as a slice of them.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content,omitempty"`
	// Reasoning is the model's reasoning_content of an assistant message.
	Reasoning string `json:"reasoning,omitempty"`
	// ToolCalls are the calls of an assistant message.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// ToolCallID names the call a tool message answers.
	ToolCallID string `json:"toolCallId,omitempty"`
}

// ToolCall is one function call made by the model.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // JSON text, as the model produced it
}

// ToolSpec is one tool definition of the fixed prefix.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // JSON Schema object
}

// Chars is the number of characters a message contributes to a request,
// the quantity the estimate prices.
func (m Message) Chars() int {
	n := len(m.Role) + len(m.Content) + len(m.Reasoning) + len(m.ToolCallID)
	for _, c := range m.ToolCalls {
		n += len(c.ID) + len(c.Name) + len(c.Arguments)
	}
	return n
}
