package enginetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// Text is a reply with content only.
func Text(content string) Reply { return Reply{Content: content} }

// Call is a reply that calls one tool; args is JSON text.
func Call(name, args string) Reply {
	return Reply{ToolCalls: []ctxwin.ToolCall{{Name: name, Arguments: args}}}
}

// Sequence answers the i-th request with replies[i] and every later one with
// the last reply. With no replies it answers "ok".
func Sequence(replies ...Reply) Script {
	var mu sync.Mutex
	n := 0
	return func(*Request) Reply {
		mu.Lock()
		defer mu.Unlock()
		if len(replies) == 0 {
			return Text("ok")
		}
		r := replies[min(n, len(replies)-1)]
		n++
		return r
	}
}

// Echo answers every request with the content of its last user message.
func Echo() Script {
	return func(r *Request) Reply {
		for i := len(r.Messages) - 1; i >= 0; i-- {
			if r.Messages[i].Role == ctxwin.RoleUser {
				return Text(r.Messages[i].Content)
			}
		}
		return Text("")
	}
}

// ScriptFile is the JSON form of a script, for the standalone fakeengine
// (see cmd/fakeengine/README.md). Requests matching a rule get the rule's
// reply; the others take the replies in order, and after the last one
// follow Then: "repeat" (the last reply again, the default), "loop" (back to
// replies[LoopFrom]) or "fallback" (the Fallback reply, "Done." when unset).
type ScriptFile struct {
	// Note answers requests with tool_choice "none" (the agent's note
	// round) with this text; shorthand for a rule.
	Note     string       `json:"note,omitempty"`
	Rules    []ScriptRule `json:"rules,omitempty"`
	Replies  []ReplySpec  `json:"replies"`
	Then     string       `json:"then,omitempty"`
	LoopFrom int          `json:"loop_from,omitempty"`
	Fallback *ReplySpec   `json:"fallback,omitempty"`
}

// ScriptRule answers the requests that match When with Reply. All
// conditions set in When must hold.
type ScriptRule struct {
	When  When      `json:"when"`
	Reply ReplySpec `json:"reply"`
}

// When is a rule's condition on a request.
type When struct {
	// ToolChoice matches the request's tool_choice ("none", "auto", ...).
	ToolChoice string `json:"tool_choice,omitempty"`
	// LastUserContains matches when the last user message contains it.
	LastUserContains string `json:"last_user_contains,omitempty"`
	// LastToolContains matches when the last message is a tool result that
	// contains it.
	LastToolContains string `json:"last_tool_contains,omitempty"`
	// Index matches the request with this 0-based number.
	Index *int `json:"index,omitempty"`
}

// ReplySpec is one reply of a script file. "{{n}}" in Content, Reasoning and
// tool arguments is replaced by the request's 0-based number.
type ReplySpec struct {
	Content   string         `json:"content,omitempty"`
	Reasoning string         `json:"reasoning,omitempty"`
	ToolCalls []ToolCallSpec `json:"tool_calls,omitempty"`
	Finish    string         `json:"finish,omitempty"`
	// Pad appends deterministic filler prose of this many bytes to Content,
	// to fill a window quickly.
	Pad   int        `json:"pad,omitempty"`
	Fault *FaultSpec `json:"fault,omitempty"`
}

// ToolCallSpec is one tool call; Arguments is a JSON object or a string of
// JSON text.
type ToolCallSpec struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// FaultSpec is the JSON form of a Fault.
type FaultSpec struct {
	Status           int    `json:"status,omitempty"`
	RetryAfter       string `json:"retry_after,omitempty"`
	Message          string `json:"message,omitempty"`
	Body             string `json:"body,omitempty"`
	Reset            bool   `json:"reset,omitempty"`
	Truncate         bool   `json:"truncate,omitempty"`
	StreamError      bool   `json:"stream_error,omitempty"`
	Hold             bool   `json:"hold,omitempty"`
	AfterChunks      int    `json:"after_chunks,omitempty"`
	FirstByteDelayMS int    `json:"first_byte_delay_ms,omitempty"`
	ParserError      bool   `json:"parser_error,omitempty"`
}

// LoadScript reads a script file.
func LoadScript(path string) (Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sc, err := ParseScript(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sc, nil
}

// ParseScript parses a script file's JSON. Unknown fields are errors, so a
// misspelt key does not silently do nothing.
func ParseScript(data []byte) (Script, error) {
	var f ScriptFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	return f.Compile()
}

// Compile checks the file and returns its script.
func (f ScriptFile) Compile() (Script, error) {
	switch f.Then {
	case "", "repeat", "loop", "fallback":
	default:
		return nil, fmt.Errorf("then: want repeat, loop or fallback, got %q", f.Then)
	}
	if f.Then == "loop" && (f.LoopFrom < 0 || f.LoopFrom >= len(f.Replies)) {
		return nil, fmt.Errorf("loop_from %d: want 0 to %d", f.LoopFrom, len(f.Replies)-1)
	}
	for i, r := range f.Replies {
		if err := r.check(fmt.Sprintf("replies[%d]", i)); err != nil {
			return nil, err
		}
	}
	rules := f.Rules
	if f.Note != "" {
		rules = append([]ScriptRule{{When: When{ToolChoice: "none"}, Reply: ReplySpec{Content: f.Note}}}, rules...)
	}
	for i, r := range rules {
		if err := r.Reply.check(fmt.Sprintf("rules[%d]", i)); err != nil {
			return nil, err
		}
	}
	fallback := ReplySpec{Content: "Done."}
	if f.Fallback != nil {
		if err := f.Fallback.check("fallback"); err != nil {
			return nil, err
		}
		fallback = *f.Fallback
	}

	var mu sync.Mutex
	seq := 0
	return func(r *Request) Reply {
		for _, rule := range rules {
			if rule.When.matches(r) {
				return rule.Reply.reply(r.Index)
			}
		}
		mu.Lock()
		k := seq
		seq++
		mu.Unlock()
		switch {
		case k < len(f.Replies):
			return f.Replies[k].reply(r.Index)
		case len(f.Replies) == 0 || f.Then == "fallback":
			return fallback.reply(r.Index)
		case f.Then == "loop":
			period := len(f.Replies) - f.LoopFrom
			return f.Replies[f.LoopFrom+(k-len(f.Replies))%period].reply(r.Index)
		}
		return f.Replies[len(f.Replies)-1].reply(r.Index)
	}, nil
}

// check reports what is wrong with a reply of the file, found at where.
func (r ReplySpec) check(where string) error {
	for i, c := range r.ToolCalls {
		if c.Name == "" {
			return fmt.Errorf("%s: tool_calls[%d]: missing name", where, i)
		}
		if _, err := c.argumentsText(); err != nil {
			return fmt.Errorf("%s: tool_calls[%d]: %w", where, i, err)
		}
	}
	if r.Pad < 0 {
		return fmt.Errorf("%s: pad must not be negative", where)
	}
	return nil
}

func (w When) matches(r *Request) bool {
	if w.ToolChoice != "" && r.ToolChoice != w.ToolChoice {
		return false
	}
	if w.Index != nil && r.Index != *w.Index {
		return false
	}
	if w.LastUserContains != "" {
		found := false
		for i := len(r.Messages) - 1; i >= 0; i-- {
			if r.Messages[i].Role == ctxwin.RoleUser {
				found = strings.Contains(r.Messages[i].Content, w.LastUserContains)
				break
			}
		}
		if !found {
			return false
		}
	}
	if w.LastToolContains != "" {
		n := len(r.Messages)
		if n == 0 || r.Messages[n-1].Role != ctxwin.RoleTool || !strings.Contains(r.Messages[n-1].Content, w.LastToolContains) {
			return false
		}
	}
	return true
}

func (c ToolCallSpec) argumentsText() (string, error) {
	raw := bytes.TrimSpace(c.Arguments)
	if len(raw) == 0 {
		return "{}", nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		if !json.Valid([]byte(s)) {
			return "", errors.New("arguments string is not JSON text")
		}
		return s, nil
	}
	if raw[0] != '{' {
		return "", errors.New("arguments: want a JSON object or a string of JSON text")
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "", err
	}
	return b.String(), nil
}

func (r ReplySpec) reply(index int) Reply {
	n := strconv.Itoa(index)
	sub := func(s string) string { return strings.ReplaceAll(s, "{{n}}", n) }
	out := Reply{Content: sub(r.Content), Reasoning: sub(r.Reasoning), Finish: r.Finish}
	if r.Pad > 0 {
		out.Content += filler(r.Pad)
	}
	for _, c := range r.ToolCalls {
		args, _ := c.argumentsText() // checked by Compile
		out.ToolCalls = append(out.ToolCalls, ctxwin.ToolCall{Name: c.Name, Arguments: sub(args)})
	}
	if f := r.Fault; f != nil {
		out.Fault = Fault{Status: f.Status, RetryAfter: f.RetryAfter, Message: f.Message, Body: f.Body,
			Reset: f.Reset, Truncate: f.Truncate, StreamError: f.StreamError, Hold: f.Hold, AfterChunks: f.AfterChunks,
			FirstByteDelay: time.Duration(f.FirstByteDelayMS) * time.Millisecond, ParserError: f.ParserError}
	}
	return out
}

// filler is n bytes of deterministic prose.
func filler(n int) string {
	const text = " The quick brown fox jumps over the lazy dog while the engine keeps its cache warm."
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(text)
	}
	return b.String()[:n]
}
