package engine

import "github.com/reika-lsp/reika-lsp/agent"

// DefaultCacheReuse is the n_cache_reuse reika asks llama.cpp for when the
// cacheReuse setting is auto: the smallest run of tokens, after the first
// difference from the previous request, that the server may reuse from its
// cache by shifting it into place.
//
// llama-server matches a run against the new prompt at its current
// position and advances that position only on a match, so a run shorter
// than n_cache_reuse that sits between two deletions stops the reuse there:
// everything after it is processed again. The size must therefore stay
// below the shortest text a shrink keeps between two deletions; the
// shortest is the end of one shed result and the header kept of the next in
// the same round ("</tool_response><tool_response>a.go lines 1-9 of 9"),
// 24 tokens in the test vocabulary and about 15 where <tool_response> is
// one token (Qwen3). Below about 4 the server starts reusing runs that only
// happen to match (template boilerplate of a deleted round), KV computed in
// another context. Measured on llama-server 0.7.0 (build 11669),
// TestRealChunkReuse: with 8 every deletion-shaped request reused all the
// text it kept, and nothing matched by chance; 32 lost everything after two
// adjacent shed results, 128 everything after the first shed result; 2 and
// 1 reused chance matches.
const DefaultCacheReuse = 8

// cacheReuse is the n_cache_reuse to send with a chat request, and whether
// to send it at all: only to llama.cpp, which alone reads it.
func (c *Client) cacheReuse(info agent.ModelInfo) (int, bool) {
	if info.Engine != EngineLlamaCpp {
		return 0, false
	}
	switch n := c.cfg.CacheReuse; {
	case n == agent.CacheReuseOff:
		return 0, true
	case n > 0:
		return n, true
	default:
		return DefaultCacheReuse, true
	}
}
