package ctxwin

import (
	"fmt"
	"strings"
)

// Gauge reads the next request as the manager prices it: the division of
// the window, the request's size, the room left to answer and the
// max_tokens to ask for, the status chip, what no shrink can remove, and
// whether the shrinks are making progress. Reading it changes no decision
// (it renders the request when the history changed).
type Gauge struct{ m *Manager }

// Gauge reads the next request.
func (m *Manager) Gauge() Gauge { return Gauge{m} }

// Budget is the current division of the window; ok is false when no
// window is known.
func (g Gauge) Budget() (b Budget, ok bool) { return g.m.budget() }

// Size estimates the next request in tokens, as shed and fold decisions see it.
func (g Gauge) Size() int { return g.m.requestSize() }

// Window is the context window in tokens, 0 when unknown.
func (g Gauge) Window() int { return g.m.window }

// Floor is what no shrink can remove from a request: the fixed prefix (the
// fixed part and the system message) and the task (the current turn's
// prompt and the results that define it), in tokens.
func (g Gauge) Floor() (prefix, task int) { return g.m.floor() }

// Stalled reports that ThrashLimit shrinks in a row made no progress, and
// says why and what to do (thrash.go).
func (g Gauge) Stalled() (stalled bool, why string) {
	m := g.m
	b, _ := m.budget()
	return m.progress.Stalled >= ThrashLimit, m.progress.Explain(b)
}

// MaxTokens is the max_tokens of the next request. Until an engine has
// reported a prompt's size the estimate prices every byte as new, at up to
// 1.6 characters a token, which can put the fixed prefix alone above a
// small window (max_tokens 1, a reply cut after one token); so until then
// max_tokens is at least the generation reserve, the room the budget holds
// for the reply. It is never below AnswerFloor (but under the model's
// output limit and REIKA_MAX_TOKENS): a request that cannot leave that
// much is not sent (AnswerRoom).
func (g Gauge) MaxTokens() int {
	m := g.m
	prompt := m.requestSize()
	if b, ok := m.budget(); ok {
		prompt = min(prompt, b.Window-ReplyMargin-AnswerFloor(b.Window, b.Reserve))
		if m.est.Samples == 0 {
			prompt = min(prompt, b.Window-b.Reserve-ReplyMargin)
		}
	}
	return MaxTokens(m.window, prompt, m.outputLimit, m.maxTokensSetting)
}

// AnswerRoom is what the window leaves the next request's answer, in
// tokens (the window less the request; negative when the request is
// over), and the floor it must clear (AnswerFloor). ReplyMargin is not
// taken off: it guards the estimate, and the room is judged only on the
// engine's counts. measured
// says the request's size rests on the engine's counts (a report of a
// request, or its tokenizer's counts), not on the estimate alone, which
// prices new bytes at up to 1.6 characters a token and can put a first
// request over a window it fits. ok is false when no window is known.
func (g Gauge) AnswerRoom() (room, floor int, measured, ok bool) {
	m := g.m
	b, ok := m.budget()
	if !ok {
		return 0, 0, false, false
	}
	return b.Window - m.requestSize(), AnswerFloor(b.Window, b.Reserve), m.est.Samples > 0 || m.est.Density > 0, true
}

// WindowFor is the smallest window, in steps of 1024 tokens, whose usable
// window (with the reserve this session would hold on it) holds tokens
// twice: the fixed prefix and the task, and as much again for the work.
func (g Gauge) WindowFor(tokens int) int {
	m := g.m
	w := 1024
	for 2*tokens > w-m.reserve.Tokens(w) {
		w += 1024
	}
	return w
}

// Chip is the status chip of the next request.
func (g Gauge) Chip() Chip {
	m := g.m
	b, ok := m.budget()
	if !ok {
		return NewChip(m.requestSize(), nil)
	}
	return NewChip(m.requestSize(), &b)
}

// Describe names message i of the last rendering, for the debug line.
func (g Gauge) Describe(i int) string {
	m := g.m
	h := m.H
	switch o := h.Owner(i); {
	case o == -1:
		return "the system message"
	case o == -2:
		return "the recap"
	case o < 0:
		return fmt.Sprintf("message %d", i)
	default:
		it := h.Items[o]
		// Which message of the item: the reply, a result, or what an event
		// appended after it.
		msg := h.msgs[i]
		first := i
		for first > 0 && h.Owner(first-1) == o {
			first--
		}
		k := i - first
		after := fmt.Sprintf("round %d", it.Round)
		if !it.IsRound() {
			after = fmt.Sprintf("the prompt of turn %d", it.Turn)
		}
		switch {
		case k > 0 && msg.Role == RoleUser && msg.Content == NotePrompt:
			return "the note prompt after " + after
		case k > 0 && IsAside(msg):
			return "the message of the shrink after " + after
		case k > 0 && msg.Role == RoleAssistant:
			return "the note after " + after
		case !it.IsRound():
			return fmt.Sprintf("the prompt of turn %d", it.Turn)
		case k == 0:
			return fmt.Sprintf("the reply of round %d", it.Round)
		case k-1 < len(it.Results):
			r := it.Results[k-1]
			what := strings.TrimSpace(r.Summary)
			if what == "" {
				what = r.Tool
			}
			return fmt.Sprintf("the result of %s in round %d", what, it.Round)
		default:
			return fmt.Sprintf("the notice after round %d", it.Round)
		}
	}
}
