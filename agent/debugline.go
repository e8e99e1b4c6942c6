package agent

import (
	"fmt"
	"strings"

	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// debugLine logs the prefix-cache line of a round (REIKA_DEBUG=1): an
// append, or where the request diverged from the last one, and what the
// engine reprocessed. The first request a process sends for a resumed
// session says so (what the engine still caches is unknown), and an append
// of which the engine reused less than half of what it had seen says the
// cache was lost (the engine restarted, or gave the slot away). A request
// that diverged names what llama.cpp reused in chunks beyond the common
// prefix, and the first that could have reused chunks and did not says the
// model cannot shift (chunkreuse.go).
func (r *run) debugLine(msgs []ctxwin.Message, div ctxwin.Divergence, resp *llm.Response) {
	defer func() {
		r.sess.trail.prevPrompt = 0
		if resp.Usage != nil {
			r.sess.trail.prevPrompt = resp.Usage.PromptTokens
		}
	}()
	if !r.h.settings().Debug {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "reika: prefix-cache round %d: ", r.sess.m.H.Rounds()+1)
	switch {
	case r.sess.trail.prev == nil && r.sess.m.H.Rounds() > 0:
		b.WriteString("first request since the session was resumed")
	case r.sess.trail.prev == nil:
		b.WriteString("first request")
	case div.Append:
		fmt.Fprintf(&b, "append (+%d messages)", len(msgs)-len(r.sess.trail.prev))
	default:
		fmt.Fprintf(&b, "diverged at message %d (%s)", div.Index, r.sess.m.Gauge().Describe(div.Index))
	}
	cached, known := 0, false
	switch {
	case resp.Timings != nil:
		cached, known = resp.Timings.CacheN, true
		fmt.Fprintf(&b, "; reprocessed %d tokens in %.2fs (cache %d)", resp.Timings.PromptN, resp.Timings.PromptMS/1000, resp.Timings.CacheN)
	case resp.Usage != nil && resp.Usage.CachedKnown:
		cached, known = resp.Usage.CachedTokens, true
		fmt.Fprintf(&b, "; reprocessed %d of %d tokens (cached %d), request %.2fs", resp.Usage.PromptTokens-resp.Usage.CachedTokens,
			resp.Usage.PromptTokens, resp.Usage.CachedTokens, resp.Elapsed.Seconds())
	case resp.Usage != nil:
		fmt.Fprintf(&b, "; prompt %d tokens (no cache report), request %.2fs", resp.Usage.PromptTokens, resp.Elapsed.Seconds())
	default:
		fmt.Fprintf(&b, "; no usage reported, request %.2fs", resp.Elapsed.Seconds())
	}
	if r.sess.trail.prev != nil && !div.Append {
		b.WriteString(r.reuseText(r.sess.trail.prev, msgs, div.Index, resp))
	}
	if prev := r.sess.trail.prevPrompt; known && r.sess.trail.prev != nil && div.Append && prev > 16 && cached < prev/2 {
		fmt.Fprintf(&b, "; the engine's cache was lost: it reused %d of the %d tokens it had seen (restarted, or the slot went to another request)", cached, prev)
	}
	r.h.logLine("%s", b.String())
}
