package main

import (
	"fmt"
	"strings"

	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// The peers' policies, each a small model of its published behaviour as
// the team's research note on peers (docs/peers.md)
// gathers it from their sources, docs and issues; each doc comment names
// its sources and says what the model leaves out. Every policy sends the same system message, tool
// definitions and tool results as reika; only what it does with the
// history differs.
var Policies = []PolicySpec{
	{Name: "none", Peer: "no management: send everything", New: func() Policy { return &nonePolicy{} }},
	{Name: "mask10", Peer: "SWE-agent observation masking, last 10 kept (The Complexity Trap, 2025)",
		New: func() Policy { return &maskPolicy{Keep: 10} }},
	{Name: "summarize83", Peer: "Claude Code / Codex CLI: summarize everything at ~83% of the window",
		New: func() Policy { return &summarizePolicy{Threshold: 0.83, KeepLast: 4} }},
	{Name: "drophalf", Peer: "Cline: drop the older half when full",
		New: func() Policy { return &dropHalfPolicy{} }},
	{Name: "shift60", Peer: "llama.cpp / KoboldCpp ContextShift: drop the oldest rounds at 80% of the window down to 60%",
		New: func() Policy { return &shiftPolicy{Trigger: 0.8, Target: 0.6} }},
	{Name: "microcompact", Peer: "Claude Code: clear all but the last 5 tool results, summarize at ~83% of the window",
		New: func() Policy { return &summarizePolicy{Threshold: 0.83, KeepLast: 4, Mask: 5} }},
	{Name: "prune40k", Peer: "opencode: prune old tool output beyond the newest 40k tokens, compact on overflow",
		New: func() Policy { return &prunePolicy{OutputLimit: 4096} }},
}

// history is the conversation as the session produced it.
type history []ctxwin.Message

func (h *history) Add(msgs ...ctxwin.Message) { *h = append(*h, msgs...) }

// alignStart moves i forward past tool results, so a kept part never
// opens with a result whose call was dropped. It returns len(msgs) when
// only results follow.
func alignStart(msgs []ctxwin.Message, i int) int {
	for i < len(msgs) && msgs[i].Role == ctxwin.RoleTool {
		i++
	}
	return i
}

// alignBack moves i back to the reply that owns the tool result at i.
func alignBack(msgs []ctxwin.Message, i int) int {
	for i > 0 && i < len(msgs) && msgs[i].Role == ctxwin.RoleTool {
		i--
	}
	return i
}

// summaryLength is how long a peer's summary is, in tokens: a tenth of
// what it replaces, between 600 and 3000 tokens, and at most an eighth of
// the window. (Claude Code reserves 20k for it and its p99.99 is 17k;
// summaries of long sessions run to a few thousand tokens.)
func summaryLength(replaced, window int) int {
	return min(max(replaced/10, 600), 3000, window/8)
}

// ---------------------------------------------------------------------

// nonePolicy sends everything, every time: append-only until the window
// overflows, then every request is refused.
type nonePolicy struct{ h history }

func (p *nonePolicy) Add(msgs ...ctxwin.Message)         { p.h.Add(msgs...) }
func (p *nonePolicy) Next(Env) ([]ctxwin.Message, error) { return p.h, nil }
func (p *nonePolicy) Served(int, int)                    {}
func (p *nonePolicy) Refused(Env, []ctxwin.Message) ([]ctxwin.Message, error) {
	return nil, nil
}
func (p *nonePolicy) TurnEnd(Env) {}

// ---------------------------------------------------------------------

// maskPolicy is SWE-agent's LastNObservations history processor
// (sweagent/agent/history_processors.py), the "observation masking" of
// The Complexity Trap (Lindenbauer et al., arXiv 2508.21433, M=10): on every request, every tool result but the newest Keep is
// replaced by a one-line placeholder; the model's reasoning and actions
// stay. It has no token trigger and no recovery: when the newest Keep
// results and the rest overflow the window, the request is refused
// (SWE-agent ends the episode there). Its `polling` option, which would
// slide the mask only every few steps, is left at its default of 1.
type maskPolicy struct {
	Keep int
	h    history
}

func (p *maskPolicy) Add(msgs ...ctxwin.Message) { p.h.Add(msgs...) }
func (p *maskPolicy) Next(Env) ([]ctxwin.Message, error) {
	return maskObservations(p.h, p.Keep), nil
}
func (p *maskPolicy) Served(int, int) {}
func (p *maskPolicy) Refused(Env, []ctxwin.Message) ([]ctxwin.Message, error) {
	return nil, nil
}
func (p *maskPolicy) TurnEnd(Env) {}

// maskObservations returns msgs with every tool result but the newest
// keep replaced by SWE-agent's placeholder.
func maskObservations(msgs []ctxwin.Message, keep int) []ctxwin.Message {
	return maskWith(msgs, keep, func(m ctxwin.Message) string {
		return fmt.Sprintf("Old environment output: (%d lines omitted)", strings.Count(m.Content, "\n")+1)
	})
}

// maskWith returns msgs with every tool result but the newest keep
// replaced by placeholder's text for it.
func maskWith(msgs []ctxwin.Message, keep int, placeholder func(ctxwin.Message) string) []ctxwin.Message {
	out := make([]ctxwin.Message, len(msgs))
	copy(out, msgs)
	seen := 0
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Role != ctxwin.RoleTool {
			continue
		}
		seen++
		if seen > keep {
			out[i].Content = placeholder(out[i])
		}
	}
	return out
}

// ---------------------------------------------------------------------

// summarizePrompt asks for the summary, appended to the conversation so
// the summary call reuses its cached prefix (Claude Code's forked
// compaction and Codex's inline compaction both do).
const summarizePrompt = "Your context window is nearly full. Write a summary of the conversation so far that lets you continue the work: " +
	"the user's requests (all of them), the files and code you looked at with line numbers, what you found, what you changed, " +
	"errors and how they were fixed, what is pending, and the next step. Do not call tools."

// continuationPrefix opens the message that replaces the summarized part.
const continuationPrefix = "This session continues an earlier conversation that ran out of context. A summary of it follows.\n\n"

// summarizePolicy is the Claude Code / Codex CLI style: when the next
// request would pass Threshold of the window (Claude Code's auto-compact
// fires at effective window − 13k, about 83.5% of 200k, by third-party
// analyses of its bundle and anthropics/claude-code#31806; Codex's
// model_auto_compact_token_limit defaults to 90%, codex-rs
// openai_models.rs),
// the whole conversation is summarized in a summary call appended to the
// current request, and the next request holds only the summary and the
// last KeepLast messages (kept with the reply their results answer).
// Claude Code's clearing of old tool results first (microcompact) and its
// re-attaching of up to five recently read files are not modelled; nor is
// Codex's keeping every user message verbatim (the summary lists them).
// A summary call that overflows drops the oldest fifth of what it
// summarizes and tries again, up to three times (Claude Code's
// prompt-too-long retry). A refused main request is summarized at once,
// keeping only the newest round.
type summarizePolicy struct {
	Threshold float64
	KeepLast  int
	// Mask, when above 0, clears every tool result but the newest Mask in
	// every request (microcompact, policies_shift.go).
	Mask int

	h    history
	head []ctxwin.Message // the summary message replacing h[:from]
	from int
}

func (p *summarizePolicy) Add(msgs ...ctxwin.Message) { p.h.Add(msgs...) }
func (p *summarizePolicy) Served(int, int)            {}
func (p *summarizePolicy) TurnEnd(Env)                {}

// view is the request as the policy now sends it.
func (p *summarizePolicy) view() []ctxwin.Message {
	v := append(append([]ctxwin.Message(nil), p.head...), p.h[p.from:]...)
	if p.Mask > 0 {
		v = maskWith(v, p.Mask, func(ctxwin.Message) string { return microcompactText })
	}
	return v
}

// Triggered reports whether a request of tokens passes the threshold.
func (p *summarizePolicy) Triggered(tokens, window int) bool {
	return float64(tokens) > p.Threshold*float64(window)
}

func (p *summarizePolicy) Next(env Env) ([]ctxwin.Message, error) {
	v := p.view()
	if p.Triggered(env.Tokens(v), env.Window()) {
		if _, err := p.compact(env, p.KeepLast); err != nil {
			return nil, err
		}
	}
	return p.view(), nil
}

func (p *summarizePolicy) Refused(env Env, _ []ctxwin.Message) ([]ctxwin.Message, error) {
	done, err := p.compact(env, 1)
	if err != nil || !done {
		return nil, err
	}
	return p.view(), nil
}

// tailStart is where the kept tail begins: the last keep messages, moved
// back to the reply their results answer.
func (p *summarizePolicy) tailStart(keep int) int {
	return max(p.from, alignBack(p.h, len(p.h)-keep))
}

// compact summarizes everything before the kept tail. It reports whether
// it did.
func (p *summarizePolicy) compact(env Env, keep int) (bool, error) {
	ts := p.tailStart(keep)
	if ts <= p.from {
		return false, nil // nothing new to summarize
	}
	v := p.view()
	req := append([]ctxwin.Message{env.System()}, v...)
	req = append(req, ctxwin.Message{Role: ctxwin.RoleUser, Content: summarizePrompt})
	replaced := env.Tokens(v[:len(p.head)+ts-p.from])
	var text string
	for try := 0; ; try++ {
		var err error
		text, err = env.Summarize(req, true, summaryLength(replaced, env.Window()))
		if err == nil {
			break
		}
		if !llm.IsOverflow(err) {
			return false, err
		}
		if try == 3 {
			return false, nil // the conversation stays as it is; the next request overflows
		}
		req = dropOldest(req, 5)
	}
	p.head = []ctxwin.Message{{Role: ctxwin.RoleUser, Content: continuationPrefix + text}}
	p.from = ts
	return true, nil
}

// dropOldest drops the oldest 1/part of a request's messages after the
// system message, keeping tool results with their calls and the last
// message (the summary prompt).
func dropOldest(req []ctxwin.Message, part int) []ctxwin.Message {
	body := req[1 : len(req)-1]
	cut := alignStart(body, max(1, len(body)/part))
	out := append([]ctxwin.Message{req[0]}, body[cut:]...)
	return append(out, req[len(req)-1])
}

// ---------------------------------------------------------------------

// truncationNote is what Cline adds to the first reply once history has
// been dropped (in our words).
const truncationNote = "\n\n[NOTE] Earlier parts of this conversation were removed to fit the context window; the first task is kept."

// dropHalfPolicy is Cline's truncation without auto-condense (its context
// manager, src/core/context/context-management, and
// getNextTruncationRange): when the
// previous request's tokens (prompt + completion) reach the window's
// maxAllowed, it keeps the first user message and the first reply (with
// its results) and drops the older half of the rest, or three quarters
// when half the tokens would still pass maxAllowed; the dropped range is
// remembered, so requests stay append-only between truncations. A refused
// request drops three quarters and retries once (Cline's handling of a
// context-window error). Cline first de-duplicates repeated file reads,
// and skips truncating when that saves 30%; that is not modelled.
type dropHalfPolicy struct {
	h        history
	firstEnd int // h[:firstEnd] is the first pair, kept
	deleted  int // h[firstEnd:deleted] is dropped
	last     int // the previous request's prompt + completion tokens
}

// maxAllowed is Cline's limit for a window.
func maxAllowed(window int) int {
	switch window {
	case 64_000:
		return window - 27_000
	case 128_000:
		return window - 30_000
	case 200_000:
		return window - 40_000
	}
	return max(window-40_000, window*8/10)
}

func (p *dropHalfPolicy) Add(msgs ...ctxwin.Message) {
	p.h.Add(msgs...)
	if p.firstEnd == 0 {
		// The first pair: the first prompt, the first reply and its results.
		for i := 1; i < len(p.h); i++ {
			if p.h[i].Role == ctxwin.RoleAssistant {
				end := i + 1
				for end < len(p.h) && p.h[end].Role == ctxwin.RoleTool {
					end++
				}
				if end < len(p.h) || len(p.h[i].ToolCalls) == end-i-1 {
					p.firstEnd = end
					p.deleted = end
				}
				break
			}
		}
	}
}

func (p *dropHalfPolicy) Served(prompt, completion int) { p.last = prompt + completion }
func (p *dropHalfPolicy) TurnEnd(Env)                   {}

func (p *dropHalfPolicy) view() []ctxwin.Message {
	if p.firstEnd == 0 {
		return append([]ctxwin.Message(nil), p.h...)
	}
	out := append([]ctxwin.Message(nil), p.h[:p.firstEnd]...)
	if p.deleted > p.firstEnd {
		for i := range out {
			if out[i].Role == ctxwin.RoleAssistant {
				out[i].Content += truncationNote
				break
			}
		}
	}
	return append(out, p.h[p.deleted:]...)
}

func (p *dropHalfPolicy) Next(env Env) ([]ctxwin.Message, error) {
	if limit := maxAllowed(env.Window()); p.last >= limit {
		quarter := p.last/2 > limit
		p.truncate(quarter)
		p.last = 0
	}
	return p.view(), nil
}

func (p *dropHalfPolicy) Refused(env Env, _ []ctxwin.Message) ([]ctxwin.Message, error) {
	if !p.truncate(true) {
		return nil, nil
	}
	return p.view(), nil
}

// truncate drops half (or three quarters) of the messages after the first
// pair and what is already dropped, an even number as Cline counts them,
// never a result without its call nor the newest round. It reports
// whether anything was dropped.
func (p *dropHalfPolicy) truncate(quarter bool) bool {
	if p.firstEnd == 0 {
		return false
	}
	start := p.deleted
	rest := len(p.h) - start
	remove := rest / 4 * 2
	if quarter {
		remove = rest * 3 / 4 / 2 * 2
	}
	cut := alignStart(p.h, start+remove)
	if last := alignBack(p.h, len(p.h)-1); cut > last {
		cut = last
	}
	if cut <= start {
		return false
	}
	p.deleted = cut
	return true
}

// ---------------------------------------------------------------------

// opencode's constants.
const (
	pruneProtect   = 40_000
	pruneMinimum   = 20_000
	prunedText     = "[Old tool result content cleared]"
	compactMarker  = "What did we do so far?"
	continueText   = "Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed."
	opencodePrompt = "Provide a detailed prompt for continuing our conversation above. Focus on information that would be helpful for continuing it: " +
		"what we did, what we are doing, which files we are working on, and what we are going to do next."
)

// entry is a message of opencode's view of the conversation.
type entry struct {
	msg     ctxwin.Message
	summary bool // the compaction summary
	pruned  bool
}

// prunePolicy is opencode (packages/opencode/src/session/compaction.ts:
// isOverflow, prune with PRUNE_PROTECT and PRUNE_MINIMUM, process). After
// each step it checks the last response's tokens (prompt + completion)
// against usable = window − output limit − reserve, with reserve =
// min(20k, output limit); past it, the next step is preceded by a
// compaction. A compaction summarizes the head in a fresh request (the
// default "prepend" mode: no system prompt, no tools, the transcript
// flattened to text, so nothing of the cache is reused), and the view
// becomes the summary, a verbatim tail of the newest clamp(usable/4, 2k,
// 15k) tokens (never less than the newest round), and a "continue"
// message. When a turn ends (opencode prunes when its prompt loop
// returns), prune walks back past the last two user turns, protects the
// newest 40k tokens of tool output, and clears older outputs when that
// frees more than 20k (by opencode's estimate, characters/4), stopping at
// a summary or an output already cleared. A refused request compacts and
// retries once. OutputLimit is the model's output limit from its config
// (4096 here, as a local model's entry commonly has).
type prunePolicy struct {
	OutputLimit int

	view      []entry
	last      int // the last served main request's prompt + completion
	compacted bool
}

func (p *prunePolicy) Add(msgs ...ctxwin.Message) {
	for _, m := range msgs {
		p.view = append(p.view, entry{msg: m})
	}
}

func (p *prunePolicy) Served(prompt, completion int) {
	p.last = prompt + completion
	p.compacted = false
}

// Usable is opencode's usable context for a window.
func (p *prunePolicy) Usable(window int) int {
	out := min(p.OutputLimit, 32_000)
	reserve := min(20_000, p.OutputLimit)
	return window - out - reserve
}

func (p *prunePolicy) messages() []ctxwin.Message {
	out := make([]ctxwin.Message, len(p.view))
	for i, e := range p.view {
		out[i] = e.msg
		if e.pruned {
			out[i].Content = prunedText
		}
	}
	return out
}

func (p *prunePolicy) Next(env Env) ([]ctxwin.Message, error) {
	if !p.compacted && p.last >= p.Usable(env.Window()) {
		if _, err := p.compact(env); err != nil {
			return nil, err
		}
	}
	return p.messages(), nil
}

func (p *prunePolicy) Refused(env Env, _ []ctxwin.Message) ([]ctxwin.Message, error) {
	done, err := p.compact(env)
	if err != nil || !done {
		return nil, err
	}
	return p.messages(), nil
}

// compact summarizes the head and keeps the tail. It reports whether it
// did.
func (p *prunePolicy) compact(env Env) (bool, error) {
	msgs := p.messages()
	keep := min(max(p.Usable(env.Window())/4, 2000), 15000)
	ts := len(msgs)
	for kept := 0; ts > 0; {
		c := env.MessageTokens(msgs[ts-1])
		if kept+c > keep {
			break
		}
		kept += c
		ts--
	}
	ts = min(alignStart(msgs, ts), newestRound(msgs))
	if ts == 0 || ts == 2 && p.view[1].summary {
		return false, nil // nothing but the last summary to summarize
	}
	head := msgs[:ts]
	flat := flatten(head)
	req := []ctxwin.Message{{Role: ctxwin.RoleUser, Content: flat + "\n\n" + opencodePrompt}}
	var text string
	for try := 0; ; try++ {
		var err error
		text, err = env.Summarize(req, false, summaryLength(env.Tokens(head), env.Window()))
		if err == nil {
			break
		}
		if !llm.IsOverflow(err) {
			return false, err
		}
		if try == 3 {
			return false, nil
		}
		// Not opencode's behaviour (its compaction fails, or loops, when
		// the summary request itself overflows): drop the oldest half.
		head = head[alignStart(head, len(head)/2):]
		req = []ctxwin.Message{{Role: ctxwin.RoleUser, Content: flatten(head) + "\n\n" + opencodePrompt}}
	}
	view := []entry{
		{msg: ctxwin.Message{Role: ctxwin.RoleUser, Content: compactMarker}},
		{msg: ctxwin.Message{Role: ctxwin.RoleAssistant, Content: text}, summary: true},
	}
	view = append(view, p.view[ts:]...)
	view = append(view, entry{msg: ctxwin.Message{Role: ctxwin.RoleUser, Content: continueText}})
	p.view = view
	p.compacted = true
	return true, nil
}

// newestRound is where the newest round (a reply with its results) or the
// newest prompt begins: a compaction keeps at least that much.
func newestRound(msgs []ctxwin.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role == ctxwin.RoleAssistant && len(m.ToolCalls) > 0 || m.Role == ctxwin.RoleUser && m.Content != continueText && m.Content != compactMarker {
			return i
		}
	}
	return len(msgs)
}

// flatten writes messages as the transcript opencode's summary request
// carries.
func flatten(msgs []ctxwin.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		switch m.Role {
		case ctxwin.RoleUser:
			b.WriteString("[User]: ")
			b.WriteString(m.Content)
		case ctxwin.RoleAssistant:
			b.WriteString("[Assistant]: ")
			if m.Reasoning != "" {
				b.WriteString("(thinking) " + m.Reasoning + "\n")
			}
			b.WriteString(m.Content)
			for _, c := range m.ToolCalls {
				fmt.Fprintf(&b, "\n[Tool call %s]: %s", c.Name, c.Arguments)
			}
		case ctxwin.RoleTool:
			b.WriteString("[Tool result]: ")
			b.WriteString(m.Content)
		}
		b.WriteString("\n\n")
	}
	return b.String()
}

// TurnEnd prunes.
func (p *prunePolicy) TurnEnd(Env) { p.prune() }

// prune clears old tool outputs as opencode's SessionCompaction.prune does.
func (p *prunePolicy) prune() {
	turns, total, pruned := 0, 0, 0
	var cands []int
walk:
	for i := len(p.view) - 1; i >= 0; i-- {
		e := p.view[i]
		if e.msg.Role == ctxwin.RoleUser {
			turns++
		}
		if turns < 2 {
			continue
		}
		switch {
		case e.summary:
			break walk
		case e.msg.Role != ctxwin.RoleTool:
			continue
		case e.pruned:
			break walk
		}
		est := len(e.msg.Content) / 4
		total += est
		if total > pruneProtect {
			pruned += est
			cands = append(cands, i)
		}
	}
	if pruned > pruneMinimum {
		for _, i := range cands {
			p.view[i].pruned = true
		}
	}
}
