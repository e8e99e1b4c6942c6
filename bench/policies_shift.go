package main

import "github.com/reika-lsp/reika-lsp/ctxwin"

// microcompactText is what Claude Code's microcompact leaves of a cleared
// tool result (by third-party analyses of its bundle, docs/peers.md).
const microcompactText = "[Old tool result content cleared]"

// microcompact is Claude Code's tiered context management: "it clears
// older tool outputs first, then summarizes the conversation if needed"
// (its docs, quoted in anthropics/claude-code#41796). Modelled as the
// summarizePolicy with Mask 5: every request shows only the newest five
// tool results, older ones replaced by microcompactText, and no summary is
// made until the masked request passes Claude Code's auto-compact point
// (the effective window − 13k, about 83.5% of 200k: the window is "full"
// by its own measure); then it compacts as summarize83 does. Claude Code's
// own triggers for clearing (token thresholds, a time-based clearing after
// an hour idle, the API's cache_edits that clear without breaking the
// cached prefix) are not modelled: the mask slides every round, as
// SWE-agent's does, so each request reprocesses from the result newly
// cleared. Nor is its re-attaching of recently read files after a
// compaction.

// shiftPolicy is ContextShift as llama.cpp's server (--context-shift) and
// KoboldCpp do it: when the context is about to fill, the oldest part of
// the conversation after what is kept (here the system message) is
// dropped, with no note or summary of it, and the rest shifted into
// place. llama.cpp's server discards half of what follows n_keep when the
// slot fills; KoboldCpp's ContextShift trims the oldest context as a chat
// client sends less. Modelled as the issue that added it states it: when
// the next request would pass Trigger (80%) of the window, the oldest
// whole messages (a reply with its results) are dropped until it is at
// most Target (60%); the dropped range is remembered, so requests are
// append-only between shifts, and a chunk-reusing engine shifts the kept
// part instead of processing it again. The newest round is never dropped;
// a refused request shifts again with nothing but the newest round left to
// keep, and the round is lost when that still does not fit. The current
// task's prompt goes with the rest when it is oldest, as it does on the
// real engines.
type shiftPolicy struct {
	Trigger, Target float64

	h    history
	from int // h[from:] is sent
}

func (p *shiftPolicy) Add(msgs ...ctxwin.Message) { p.h.Add(msgs...) }
func (p *shiftPolicy) Served(int, int)            {}
func (p *shiftPolicy) TurnEnd(Env)                {}

func (p *shiftPolicy) Next(env Env) ([]ctxwin.Message, error) {
	w := float64(env.Window())
	if float64(env.Tokens(p.h[p.from:])) > p.Trigger*w {
		p.shift(env, int(p.Target*w))
	}
	return p.h[p.from:], nil
}

func (p *shiftPolicy) Refused(env Env, _ []ctxwin.Message) ([]ctxwin.Message, error) {
	if !p.shift(env, 0) {
		return nil, nil
	}
	return p.h[p.from:], nil
}

// shift drops the oldest messages until the request is at most target
// tokens, never the newest round. It reports whether it dropped any.
func (p *shiftPolicy) shift(env Env, target int) bool {
	newest := alignBack(p.h, len(p.h)-1)
	start := p.from
	for p.from < newest && env.Tokens(p.h[p.from:]) > target {
		p.from = min(alignStart(p.h, p.from+1), newest)
	}
	return p.from > start
}
