package ctxwin

import "math"

// Counting with the engine (docs/design.md §3.3, beyond the seed). The size of a
// request is its fixed part (Estimator.Fixed: the tool definitions as the
// template renders them, the generation prompt) plus what each of its
// messages costs. A message's cost is, in order of preference:
//
//   - settled: its share of the prompt tokens the engine reported for a
//     request that carried it;
//   - provisional: the engine's count from before it was sent — its
//     tokenizer's count of the message's text plus the template's overhead
//     per message, or a reply's completion tokens plus that overhead;
//   - estimated: the Estimator's pricing of its bytes.
//
// When the engine reports a request's prompt tokens, the difference from
// what the request was priced at is shared out: over its estimated messages
// and the fixed part (until that is settled) in proportion to their prices,
// else evenly over its provisional ones — that difference is the template's
// overhead per message, which is learned from it — else into the fixed part.
// Every message of the request is then settled, so the next request's size
// is the engine's count of the last one plus what is new.
//
// The template overhead is learned from those reports rather than asked for
// (llama.cpp's POST /apply-template renders a prompt, which would need a
// second request and a tokenization of the whole prompt per round): after
// one append whose new messages were all counted by the tokenizer, the
// engine's own prompt count tells what its template adds per message.

// count is what a message costs in a request, in tokens.
type count struct {
	tokens  int
	settled bool
}

// Kinds of a price of an unsettled message in a sent request.
const (
	priceEstimated = iota
	priceProvisional
)

// sentRequest is the last request sent, as it was priced, for the engine's
// report of it: what its settled messages cost together, and each of the
// others.
type sentRequest struct {
	settled int
	hashes  []uint64
	prices  []int
	kinds   []int8
	fixed   int
	// fixedSettled says the fixed part came from an earlier report.
	fixedSettled bool
}

// countOf is the count of the message of hash h, -1 when none.
func (e *Estimator) countOf(h uint64) int {
	if e == nil {
		return -1
	}
	if c, ok := e.counts[h]; ok {
		return c.tokens
	}
	return -1
}

// settled reports whether the engine's report settled the message of hash h.
func (e *Estimator) settled(h uint64) bool {
	if e == nil {
		return false
	}
	c, ok := e.counts[h]
	return ok && c.settled
}

// provisional records the engine's count of a message not yet reported on.
func (e *Estimator) provisional(m Message, tokens int) {
	if e.counts == nil {
		e.counts = make(map[uint64]count)
	}
	h := m.hash()
	if c, ok := e.counts[h]; ok && c.settled {
		return
	}
	e.counts[h] = count{tokens: max(tokens, 1)}
}

// textTokens is the tokenizer's count of text, when it counted it.
func (e *Estimator) textTokens(text string) (int, bool) {
	n, ok := e.texts[fnvString(fnvOffset, text)]
	return n, ok
}

// wholeTokens is the engine's count of a result's whole text: its
// tokenizer's, or what a reported request carrying it whole settled for its
// message, less the template's overhead.
func (e *Estimator) wholeTokens(r *Result) (int, bool) {
	if n, ok := e.textTokens(r.Text); ok {
		return n, true
	}
	whole := Message{Role: RoleTool, ToolCallID: r.CallID, Content: r.Text}
	if c, ok := e.counts[whole.hash()]; ok && c.settled {
		return max(c.tokens-e.overhead(), 1), true
	}
	return 0, false
}

// toCount is one text Uncounted listed: msg is the hash of the message
// whose text it is (0: a result's whole text only).
type toCount struct {
	text string
	msg  uint64
}

// body is the text of a message that the engine's tokenizer counts.
func (m Message) body() string {
	if len(m.ToolCalls) == 0 && m.Reasoning == "" {
		return m.Content
	}
	s := m.Reasoning + "\n" + m.Content
	for _, c := range m.ToolCalls {
		s += "\n" + c.Name + " " + c.Arguments
	}
	return s
}

// Counting is the texts of the next request that the engine has not
// counted (Uncounted), to count with its tokenizer in one call and hand
// back with Set before Prepare.
type Counting struct {
	Texts []string
	m     *Manager
	items []toCount
}

// Uncounted lists the texts of the next request that the engine has not
// counted: each message without a count, and the whole text of each result
// of the newest round (what a cut shares out).
func (m *Manager) Uncounted() Counting {
	h := m.H
	msgs := h.Messages()
	var items []toCount
	seen := map[uint64]bool{}
	add := func(text string, msg uint64) {
		k := fnvString(fnvOffset, text)
		if text == "" || seen[k] {
			return
		}
		seen[k] = true
		items = append(items, toCount{text: text, msg: msg})
	}
	for _, i := range h.unsettled {
		if h.tokens[i] < 0 {
			add(msgs[i].body(), h.hashes[i])
		}
	}
	if last := h.Last(); last != nil {
		for _, r := range last.Results {
			if _, ok := m.est.textTokens(r.Text); !ok {
				add(r.Text, 0)
			}
		}
	}
	texts := make([]string, len(items))
	for i, c := range items {
		texts[i] = c.text
	}
	return Counting{Texts: texts, m: m, items: items}
}

// Set records the tokenizer's counts of the texts, in their order.
// Counts of another length are ignored.
func (cn Counting) Set(tokens []int) {
	m := cn.m
	if m == nil || len(tokens) != len(cn.items) {
		return
	}
	e := &m.est
	if e.texts == nil {
		e.texts = make(map[uint64]int)
	}
	chars, total := 0, 0
	for i, c := range cn.items {
		n := tokens[i]
		if n <= 0 {
			continue
		}
		e.texts[fnvString(fnvOffset, c.text)] = n
		if c.msg != 0 {
			if e.counts == nil {
				e.counts = make(map[uint64]count)
			}
			if old, ok := e.counts[c.msg]; !ok || !old.settled {
				e.counts[c.msg] = count{tokens: n + e.overhead()}
			}
		}
		chars += len(c.text)
		total += n
	}
	if total > 0 && chars >= 200 {
		d := float64(chars) / float64(total)
		if e.Density > 0 {
			d = (e.Density + d) / 2
		}
		e.Density = d
	}
	m.H.recount()
}

// snapshot records how the request now rendered was priced, for the
// engine's report of it. Its work is in proportion to the unsettled
// messages: on the append path, what is new (with an engine that reports
// no usage, every message stays unsettled).
func (m *Manager) snapshot() {
	h := m.H
	n := len(h.unsettled)
	s := &sentRequest{
		settled:      h.sumCounted,
		hashes:       make([]uint64, n),
		prices:       make([]int, n),
		kinds:        make([]int8, n),
		fixed:        m.fixedTokens(),
		fixedSettled: m.est.Fixed > 0,
	}
	for k, i := range h.unsettled {
		s.hashes[k] = h.hashes[i]
		if t := h.tokens[i]; t >= 0 {
			s.settled -= t
			s.prices[k], s.kinds[k] = t, priceProvisional
			continue
		}
		s.prices[k] = m.est.Tokens(h.chars[i], h.carried[i]) + m.est.overhead()
	}
	m.est.sent = s
}

// fixedTokens is the request's fixed part: the engine's count once it
// reported one, else the estimate of the tool definitions.
func (m *Manager) fixedTokens() int {
	if m.est.Fixed > 0 {
		return m.est.Fixed
	}
	return m.est.ToolTokens(m.H.Tools, m.H.sentTools)
}

// attribute shares the engine's count of the last sent request (prompt
// tokens) out over its parts and settles them.
func (m *Manager) attribute(prompt int) {
	e := &m.est
	s := e.sent
	if s == nil || prompt <= 0 {
		return
	}
	total := s.fixed + s.settled
	var estimated float64
	nProvisional := 0
	for i, p := range s.prices {
		total += p
		if s.kinds[i] == priceEstimated {
			estimated += float64(p)
		} else {
			nProvisional++
		}
	}
	if !s.fixedSettled {
		estimated += float64(s.fixed)
	}
	residual := float64(prompt - total)
	fixed := float64(s.fixed)
	share := func(p int, kind int8) int { return p }
	switch {
	case estimated > 0:
		scale := residual / estimated
		share = func(p int, kind int8) int {
			if kind != priceEstimated {
				return p
			}
			return max(int(math.Round(float64(p)*(1+scale))), 1)
		}
		if !s.fixedSettled {
			fixed *= 1 + scale
		}
	case nProvisional > 0:
		per := residual / float64(nProvisional)
		share = func(p int, kind int8) int {
			if kind != priceProvisional {
				return p
			}
			return max(int(math.Round(float64(p)+per)), 1)
		}
		e.Overhead = min(max(e.Overhead+per/2, 0), maxOverhead)
	default:
		fixed += residual
	}
	e.Fixed = max(int(math.Round(fixed)), 1)
	if e.counts == nil {
		e.counts = make(map[uint64]count)
	}
	for i, h := range s.hashes {
		e.counts[h] = count{tokens: share(s.prices[i], s.kinds[i]), settled: true}
	}
	e.sent = nil
	m.H.recount()
}

// maxOverhead bounds the learned template overhead per message.
const maxOverhead = 64
