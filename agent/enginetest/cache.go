package enginetest

import "slices"

// promptCache is the fake's model of llama-server's prompt caching, as
// measured on llama-server 0.7.0:
//
//   - the slot holds the tokens of the last prompt and of the reply it
//     generated, but the reply's last token (the one sampled last is never
//     evaluated: after a reply that ended with its end-of-turn token, the
//     slot ends with the reply's text);
//   - earlier slot states are kept in host memory (--cache-ram, 8 GiB by
//     default), and before a prompt is processed the state that serves the
//     most of it — the slot's own or a kept one — is put in the slot, so a
//     prompt that comes back after a detour is reused again.
//
// How much of a prompt a cached state serves is reused: today the longest
// common token prefix. llama.cpp's chunk reuse (n_cache_reuse) will extend
// reused, and only reused.
type promptCache struct {
	slot []uint32
	// host enables the host-memory cache; kept holds its states, newest
	// last.
	host bool
	kept [][]uint32
}

// hostCacheTokens bounds the tokens kept in host memory (8 GiB holds far
// more than any test sends).
const hostCacheTokens = 1 << 22

// reused is how many leading tokens of prompt a cached state serves.
func reused(cached, prompt []uint32) int { return commonPrefix(cached, prompt) }

// take readies the slot for prompt and returns how many of its tokens the
// slot then serves.
func (c *promptCache) take(prompt []uint32) int {
	if !c.host {
		return reused(c.slot, prompt)
	}
	c.keep(c.slot)
	best, at := reused(c.slot, prompt), -1
	for i, st := range c.kept {
		if n := reused(st, prompt); n > best {
			best, at = n, i
		}
	}
	if at >= 0 {
		c.slot = slices.Clone(c.kept[at])
	}
	return best
}

// store puts what the slot holds after a request.
func (c *promptCache) store(tokens []uint32) { c.slot = tokens }

// keep saves a state in host memory, replacing any kept state it extends,
// and drops the oldest states beyond hostCacheTokens.
func (c *promptCache) keep(st []uint32) {
	if len(st) == 0 {
		return
	}
	for _, k := range c.kept {
		if len(k) >= len(st) && commonPrefix(k, st) == len(st) {
			return // already kept, maybe in a longer state
		}
	}
	out := c.kept[:0]
	for _, k := range c.kept {
		if commonPrefix(k, st) < len(k) {
			out = append(out, k) // st does not extend it
		}
	}
	c.kept = append(out, slices.Clone(st))
	total := 0
	for _, k := range c.kept {
		total += len(k)
	}
	for total > hostCacheTokens && len(c.kept) > 1 {
		total -= len(c.kept[0])
		c.kept = c.kept[1:]
	}
}
