package agent

import (
	"fmt"

	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// PromptTally counts, over a session, the prompt tokens its requests made
// the engine process and those the engine reused from its cache instead:
// llama.cpp's timings (prompt_n, cache_n), elsewhere the usage
// (prompt_tokens less prompt_tokens_details.cached_tokens, and the cached
// tokens). A subagent's requests and the note rounds count with the
// session's. It is saved in the session log, so a resumed session keeps
// counting.
type PromptTally struct {
	Processed int `json:"processed"`
	Reused    int `json:"reused"`
	// Requests is how many requests were counted; Unreported how many of
	// them said nothing of the cache (their prompts count as processed).
	Requests   int `json:"requests"`
	Unreported int `json:"unreported,omitempty"`
}

// Add counts one response. A response without usage counts nothing: its
// prompt is unknown, not zero.
func (t *PromptTally) Add(resp *llm.Response) {
	switch {
	case resp == nil:
		return
	case resp.Timings != nil:
		t.Processed += resp.Timings.PromptN
		t.Reused += resp.Timings.CacheN
	case resp.Usage != nil && resp.Usage.CachedKnown:
		t.Processed += max(resp.Usage.PromptTokens-resp.Usage.CachedTokens, 0)
		t.Reused += resp.Usage.CachedTokens
	case resp.Usage != nil:
		t.Processed += resp.Usage.PromptTokens
		t.Unreported++
	default:
		return
	}
	t.Requests++
}

// String is the tally as the status tooltip and the end of `reika-lsp run`
// show it, e.g. "Prompt tokens this session: 48.2k processed, 310k reused
// from the engine's cache (87%)"; "" before any request was counted.
func (t PromptTally) String() string {
	if t.Requests == 0 {
		return ""
	}
	s := fmt.Sprintf("Prompt tokens this session: %s processed, %s reused from the engine's cache", ctxwin.FormatTokens(t.Processed), ctxwin.FormatTokens(t.Reused))
	if all := t.Processed + t.Reused; all > 0 {
		s += fmt.Sprintf(" (%d%%)", t.Reused*100/all)
	}
	if t.Unreported > 0 {
		s += fmt.Sprintf("; %d of %d requests reported no cache", t.Unreported, t.Requests)
	}
	return s
}

// PromptTally is the current session's tally; zero when there is no
// session. Ask it while no turn runs: a turn's status carries the tally in
// its tooltip.
func (a *Agent) PromptTally() PromptTally {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sess == nil || a.sess.tally == nil {
		return PromptTally{}
	}
	return *a.sess.tally
}
