package ctxwin

import "math"

// Pricing of the estimate (DESIGN.md §3.3).
const (
	// BaselineCharsPerToken is the estimate before anything is learned, and
	// the sparsest the shed and fold decisions ever assume.
	BaselineCharsPerToken = 4.0
	// NewCharsPerToken is the sparsest pricing of bytes no request has
	// carried yet: code, JSON and CJK tokenize denser than prose.
	NewCharsPerToken = 1.6
	// maxRatio bounds what one odd engine report can teach.
	maxRatio = 8.0
)

// Estimator prices requests in tokens without a tokenizer. It learns the
// ratio of the prompt tokens an engine reports to its own baseline estimate
// and keeps it across turns. Bytes that an earlier request carried are
// priced with the learned ratio (never sparser than the baseline); bytes a
// request adds for the first time are priced at NewCharsPerToken or denser.
// The zero value is ready to use. Not safe for concurrent use.
type Estimator struct {
	// Ratio is reported prompt tokens ÷ (request bytes / 4) of the last
	// report; 0 until an engine has reported usage.
	Ratio float64 `json:"ratio,omitempty"`
	// Samples counts the reports learned from.
	Samples int `json:"samples,omitempty"`

	seen map[uint64]struct{} // hashes of messages some request carried
}

// LearnedRatio is the learned ratio, 1 before any report.
func (e *Estimator) LearnedRatio() float64 {
	if e.Ratio <= 0 {
		return 1
	}
	return e.Ratio
}

// decisionRatio never assumes content sparser than the baseline.
func (e *Estimator) decisionRatio() float64 { return max(e.LearnedRatio(), 1) }

// Tokens prices chars bytes: carried bytes at the learned ratio, new bytes
// at NewCharsPerToken or denser.
func (e *Estimator) Tokens(chars int, carried bool) int {
	t := float64(chars) * e.decisionRatio() / BaselineCharsPerToken
	if !carried {
		t = max(t, float64(chars)/NewCharsPerToken)
	}
	return int(math.Ceil(t))
}

// CharsFor is the most new bytes that fit in tokens, the inverse of
// Tokens(·, false).
func (e *Estimator) CharsFor(tokens int) int {
	if tokens <= 0 {
		return 0
	}
	perToken := min(NewCharsPerToken, BaselineCharsPerToken/e.decisionRatio())
	return int(float64(tokens) * perToken)
}

// Learn records an engine's report: promptTokens for a request of
// requestChars bytes. A report of 0 tokens (an engine that reports nothing)
// teaches nothing: missing usage is never zero.
func (e *Estimator) Learn(promptTokens, requestChars int) {
	if promptTokens <= 0 || requestChars <= 0 {
		return
	}
	r := float64(promptTokens) / (float64(requestChars) / BaselineCharsPerToken)
	e.Ratio = min(max(r, 1/maxRatio), maxRatio)
	e.Samples++
}

// mark records that a request carried m, so later requests price it with
// the learned ratio.
func (e *Estimator) mark(m Message) {
	if e.seen == nil {
		e.seen = make(map[uint64]struct{})
	}
	e.seen[m.hash()] = struct{}{}
}

// Carried reports whether an earlier request carried m.
func (e *Estimator) Carried(m Message) bool {
	_, ok := e.seen[m.hash()]
	return ok
}

// MessageTokens prices one message.
func (e *Estimator) MessageTokens(m Message) int {
	return e.Tokens(m.Chars(), e.Carried(m))
}

// ToolTokens prices the tool definitions of the fixed prefix.
func (e *Estimator) ToolTokens(tools []ToolSpec, carried bool) int {
	return e.Tokens(ToolChars(tools), carried)
}

// ToolChars is the size of the tool definitions in bytes.
func ToolChars(tools []ToolSpec) int {
	n := 0
	for _, t := range tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return n
}

// hash identifies a message's bytes (FNV-1a, without copying them).
func (m Message) hash() uint64 {
	h := uint64(fnvOffset)
	h = fnvString(h, m.Role)
	h = fnvString(h, m.Content)
	h = fnvString(h, m.Reasoning)
	h = fnvString(h, m.ToolCallID)
	for _, c := range m.ToolCalls {
		h = fnvString(h, c.ID)
		h = fnvString(h, c.Name)
		h = fnvString(h, c.Arguments)
	}
	return h
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnvString folds s and a separator into h.
func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	h ^= 0xff
	h *= fnvPrime
	return h
}
