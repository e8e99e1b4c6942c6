package ctxwin

import "math"

// Pricing of the estimate (docs/design.md §3.3).
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

// Estimator prices requests in tokens. What the engine has counted it
// takes from the engine (see count.go: the prompt tokens it reported,
// shared out over the messages of the request, the completion tokens of a
// reply, and its tokenizer's counts of new texts). The rest it estimates
// without a tokenizer: it learns the ratio of the prompt tokens an engine
// reports to its own baseline estimate and keeps it across turns; bytes that
// an earlier request carried are priced with the learned ratio (never
// sparser than the baseline); bytes a request adds for the first time are
// priced at NewCharsPerToken or denser, or, once the engine's tokenizer has
// counted texts, at the density it measured (never sparser than the
// baseline). The zero value is ready to use. Not safe for concurrent use.
type Estimator struct {
	// Ratio is reported prompt tokens ÷ (request bytes / 4) of the last
	// report; 0 until an engine has reported usage.
	Ratio float64 `json:"ratio,omitempty"`
	// Samples counts the reports learned from.
	Samples int `json:"samples,omitempty"`
	// Overhead is what the chat template adds to a message beyond its text
	// (role markers, wrappers), in tokens, learned from the engine's reports
	// of requests whose new messages its tokenizer had counted; 0 until then.
	Overhead float64 `json:"overhead,omitempty"`
	// Fixed is the engine's count of a request beyond its messages: the tool
	// definitions as the template renders them and the generation prompt. 0
	// until an engine has reported a request.
	Fixed int `json:"fixed,omitempty"`
	// Density is the characters per token of the texts the engine's
	// tokenizer counted; 0 when no tokenizer has counted any.
	Density float64 `json:"density,omitempty"`

	seen   map[uint64]struct{} // hashes of messages some request carried
	counts map[uint64]count    // message hash → what the message costs in a request
	texts  map[uint64]int      // text hash → the tokenizer's count of the text alone
	sent   *sentRequest        // the last request sent, for the engine's report
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

// newCharsPerToken is the sparsest pricing of new bytes: NewCharsPerToken,
// or the density the engine's tokenizer measured (never sparser than the
// baseline).
func (e *Estimator) newCharsPerToken() float64 {
	if e.Density > 0 {
		return min(e.Density, BaselineCharsPerToken)
	}
	return NewCharsPerToken
}

// Tokens prices chars bytes: carried bytes at the learned ratio, new bytes
// at NewCharsPerToken (or the measured density) or denser.
func (e *Estimator) Tokens(chars int, carried bool) int {
	t := float64(chars) * e.decisionRatio() / BaselineCharsPerToken
	if !carried {
		t = max(t, float64(chars)/e.newCharsPerToken())
	}
	return int(math.Ceil(t))
}

// CharsFor is the most new bytes that fit in tokens, the inverse of
// Tokens(·, false).
func (e *Estimator) CharsFor(tokens int) int {
	if tokens <= 0 {
		return 0
	}
	perToken := min(e.newCharsPerToken(), BaselineCharsPerToken/e.decisionRatio())
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

// mark records that a request carried the message of hash h, so later
// requests price it with the learned ratio.
func (e *Estimator) mark(h uint64) {
	if e.seen == nil {
		e.seen = make(map[uint64]struct{})
	}
	e.seen[h] = struct{}{}
}

// Carried reports whether an earlier request carried m.
func (e *Estimator) Carried(m Message) bool { return e.carried(m.hash()) }

func (e *Estimator) carried(h uint64) bool {
	_, ok := e.seen[h]
	return ok
}

// MessageTokens prices one message: what the engine counted for it, else
// the estimate of its bytes and the template's overhead.
func (e *Estimator) MessageTokens(m Message) int {
	h := m.hash()
	if c, ok := e.counts[h]; ok {
		return c.tokens
	}
	return e.Tokens(m.Chars(), e.carried(h)) + e.overhead()
}

// overhead is the learned template overhead of a message, in whole tokens.
func (e *Estimator) overhead() int { return int(math.Round(e.Overhead)) }

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
