package engine

import (
	"github.com/reika-lsp/reika-lsp/agent/llm"
)

// DefaultCacheReuse is the n_cache_reuse reika asks llama.cpp for when the
// cacheReuse setting is auto: the smallest run of tokens, after the first
// difference from the previous request, that the server may reuse from its
// cache by shifting it into place.
//
// llama-server matches a run against the new prompt at its current
// position and advances that position only on a match, so a run shorter
// than n_cache_reuse that sits between two deletions stops the reuse there:
// everything after it is processed again. The size must therefore stay
// below the shortest text a shrink keeps between two deletions: the end of
// one shed result and the header kept of the next in the same round
// ("</tool_response><tool_response>a.go lines 1-9 of 9"), 24 tokens in the
// test vocabulary and about 15 where <tool_response> is one token (Qwen3).
// Too small a size reuses runs that only happen to match, KV computed for
// other text. Measured on llama-server 0.7.0 (build 11669) with
// TestRealChunkReuse: every size from 1 to 16 reused all a deletion-shaped
// request kept (deleted rounds, deleted bodies of shed results, three of
// them adjacent); 32 to 256 lost everything after two adjacent shed
// results, 128 and 256 everything after the first shed result; sizes 1 and
// 2 reused tokens by chance after an insertion, 4 and up none. 8 is below
// the shortest kept run with a margin for denser vocabularies, and twice
// the size where chance matches stopped.
const DefaultCacheReuse = 8

// CacheReuseAuto and CacheReuseOff, as Config.CacheReuse, are the
// cacheReuse setting's "auto" and "off", with the values of the agent's
// settings (agent.CacheReuseAuto, agent.CacheReuseOff).
const (
	CacheReuseAuto = 0
	CacheReuseOff  = -1
)

// CacheReuseServer, as Config.CacheReuse, sends no n_cache_reuse at all, so
// that the server's own --cache-reuse applies, as it does to a client that
// does not know the field. No setting gives it: the bench runs the peers'
// policies this way.
const CacheReuseServer = -2

// cacheReuse is the n_cache_reuse to send with a chat request, and whether
// to send it at all: only to llama.cpp, which alone reads it.
func (c *Client) cacheReuse(info llm.ModelInfo) (int, bool) {
	if info.Engine != EngineLlamaCpp {
		return 0, false
	}
	switch n := c.cfg.CacheReuse; {
	case n == CacheReuseServer:
		return 0, false
	case n == CacheReuseOff:
		return 0, true
	case n > 0:
		return n, true
	default:
		return DefaultCacheReuse, true
	}
}
