package agent

import (
	"fmt"
	"slices"
	"strings"

	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// What llama.cpp's chunk reuse did for a request that diverged from the
// one before it. After the common prefix the server looks for runs of at
// least n_cache_reuse tokens of its cache that match the new prompt at its
// current position and shifts them into place; the position advances only
// on a match, so text deleted from the previous request costs nothing and
// the text kept after it is reused, while an insertion stops the reuse. The
// engine's cache_n beyond the common prefix is what the shifted chunks
// saved.

// reuseMargin is the slack, in tokens, of the common prefix as the agent
// prices it: the engine's counts of the messages before the divergence,
// plus the message where it diverged (the prefix may run into it), plus
// this and a fiftieth of the rest (the template's tokens per message are
// learned, not counted: against the fake engine's common prefix, the
// priced prefix fell up to 24 tokens short of its cache_n).
const reuseMargin = 16

// minKeptForReuse is how much a deletion-shaped request must keep after
// its first difference for reuse to be expected of it.
const minKeptForReuse = 64

// chunkReuse is what the engine reused of a diverged request beyond its
// common prefix.
type chunkReuse struct {
	// Beyond is cache_n less the common prefix (at most, as priced), and
	// Reused says it is more than the pricing's error: chunks after the
	// divergence were reused.
	Beyond int
	Reused bool
	// Expected is the tokens of whole messages the request kept after the
	// divergence when it only deleted from the previous request (whole
	// messages, or the tail of a message's text) and appended new ones;
	// 0 when it inserted or changed text, where reuse stops anyway.
	Expected int
}

// pricer prices messages and tool definitions: the Manager's Prices, or an
// Estimator in tests.
type pricer interface {
	MessageTokens(ctxwin.Message) int
	ToolTokens([]ctxwin.ToolSpec, bool) int
}

// analyseReuse compares a request that diverged at d from prev with what
// the engine reported reusing (cached, its cache_n).
func analyseReuse(est pricer, tools []ctxwin.ToolSpec, prev, next []ctxwin.Message, d, cached int) chunkReuse {
	prefix := est.ToolTokens(tools, true)
	for _, m := range next[:min(d+1, len(next))] {
		prefix += est.MessageTokens(m)
	}
	out := chunkReuse{Beyond: cached - prefix, Reused: cached-prefix > reuseMargin+prefix/50}
	if kept, ok := deletionShaped(prev, next, d); ok {
		for _, m := range kept {
			out.Expected += est.MessageTokens(m)
		}
	}
	return out
}

// deletionShaped reports whether next is prev (from message d on) with
// messages deleted, messages cut short (a prefix of their text kept, as a
// shed result keeps its header; reasoning dropped), and new messages only
// at the end; kept are the messages after d it kept whole.
func deletionShaped(prev, next []ctxwin.Message, d int) (kept []ctxwin.Message, ok bool) {
	j := d // the next message of prev that may be matched
	appended := false
	for i := d; i < len(next); i++ {
		k := j
		for k < len(prev) && !prev[k].Equal(next[i]) && !cutOf(next[i], prev[k]) {
			k++
		}
		if k == len(prev) {
			appended = true // new: only more new messages may follow
			continue
		}
		if appended {
			return nil, false // kept text after new text: an insertion
		}
		if i > d && prev[k].Equal(next[i]) {
			kept = append(kept, next[i])
		}
		j = k + 1
	}
	return kept, true
}

// cutOf reports whether m is o with the end of its text (or its reasoning)
// deleted.
func cutOf(m, o ctxwin.Message) bool {
	if m.Role != o.Role || m.ToolCallID != o.ToolCallID || !slices.Equal(m.ToolCalls, o.ToolCalls) {
		return false
	}
	if m.Reasoning != o.Reasoning && m.Reasoning != "" {
		return false
	}
	return strings.HasPrefix(o.Content, m.Content) && (m.Content != "" || o.Content == "")
}

// reuseMissesToWarn is how many deletion-shaped requests in a row must
// reuse nothing beyond the common prefix before the debug line says the
// model cannot shift. One is not evidence: against the fake engine, which
// can shift, a fold's request after its note round has reused nothing
// beyond the prefix while the sheds around it reused their kept text. A
// model that cannot shift misses on every event.
const reuseMissesToWarn = 3

// reuseText is the debug line's account of chunk reuse: the tokens
// reused beyond the common prefix, or, once per agent, that the engine
// reused none of what reuseMissesToWarn deletion-shaped requests in a row
// kept although it was asked to (the model's memory cannot shift).
func (r *run) reuseText(prev, next []ctxwin.Message, d int, resp *llm.Response) string {
	if resp.Timings == nil {
		return ""
	}
	m := r.sess.m
	cr := analyseReuse(m.Prices(), m.H.Tools, prev, next, d, resp.Timings.CacheN)
	switch {
	case resp.CacheReuse > 0 && cr.Reused:
		r.sess.trail.reuseMisses = 0
		return fmt.Sprintf("; reused about %d tokens in chunks beyond the common prefix", cr.Beyond)
	case resp.CacheReuse > 0 && cr.Expected >= max(minKeptForReuse, 2*resp.CacheReuse):
		if r.sess.trail.reuseMisses++; r.sess.trail.reuseMisses < reuseMissesToWarn {
			return ""
		}
		if !r.h.noShiftOnce() {
			return ""
		}
		return fmt.Sprintf("; the engine reused none of the %d tokens this request kept after its first difference (%d such requests in a row), though asked to reuse chunks of %d (n_cache_reuse): "+
			"the model's memory cannot shift (sliding-window or recurrent layers, or multimodal; llama-server logs \"cache reuse is not supported\"), "+
			"so each shed or fold is processed again from its first change", cr.Expected, r.sess.trail.reuseMisses, resp.CacheReuse)
	}
	return ""
}
