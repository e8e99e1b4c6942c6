package enginetest

import (
	"fmt"
	"slices"
)

// promptCache is the fake's model of llama-server's KV cache, as read in
// its source (tools/server/server-context.cpp, server-task.cpp) and
// measured on llama-server 0.7.0 (build 11669) with -lv 4:
//
//   - Slots. Each slot holds the tokens of its last prompt and of the reply
//     it generated, but the reply's last token (the one sampled last is
//     never evaluated: after a reply that ended with its end-of-turn token,
//     the slot ends with the reply's text). A request names its slot with
//     id_slot; otherwise it goes to the idle slot whose tokens share the
//     longest common prefix with it, as a share of the new prompt, when that
//     share passes 0.10 (--slot-prompt-similarity), else to the least
//     recently used slot (an empty one first).
//   - Host memory (--cache-ram, 8 GiB by default). When a request takes a
//     slot by recency, or by similarity but keeping less than half of what
//     the slot holds, the slot's state is saved first, and a saved state
//     replaces it when it beats the slot's own on both the share of the
//     state kept (at least a quarter) and the share of the prompt served; a
//     restored state leaves host memory. So does a request that names its
//     slot (id_slot), but when that slot is empty it skips both: nothing is
//     restored into it (0.7.0, measured). The other idle slots are saved as each request
//     starts, and where the slots share one KV cache (-kvu, the default
//     when -np is not given) they are also cleared. A state already held
//     (a prefix of a saved one) is not saved again, and saved states that
//     the new one extends are dropped.
//   - Reuse. Of the state in the slot, the longest common token prefix is
//     reused. Then, with n_cache_reuse N > 0 (per request; the default is
//     --cache-reuse) and a model whose memory can shift, the chunk scan:
//     from the end of the prefix, the cache position moves forward until a
//     run of at least N tokens matches the prompt at its current position;
//     that run is shifted into place and both positions move past it. The
//     prompt position only moves on a match, so text deleted from the
//     previous prompt costs nothing and the text kept after it is reused,
//     but any inserted token stops the reuse there: everything after it is
//     processed again. A model whose memory cannot shift (sliding-window or
//     recurrent layers) refuses the scan with a warning in the log and
//     reuses the prefix only.
//   - At least one token is always processed: a prompt the cache serves
//     whole is served but for its last token.
type promptCache struct {
	slots []slotState
	// host enables host memory; kept holds its states, oldest first, at
	// most limit tokens in all (always one, whatever its size).
	host  bool
	kept  [][]uint32
	limit int
	// unified says the slots share one KV cache: a request clears the
	// other idle slots (after saving them in host memory).
	unified bool
}

// slotState is one slot.
type slotState struct {
	tokens []uint32
	// used is the request that used the slot last, -1 before any.
	used int
	// task, prompt, cached and processed describe that request, for
	// /slots.
	task, prompt int
}

// Chunk is a run of the cache that a request reused after the common
// prefix: Size tokens from cache position Cache, shifted to prompt position
// Prompt.
type Chunk struct {
	Cache, Prompt, Size int
}

// Cache defaults.
const (
	// slotPromptSimilarity is --slot-prompt-similarity.
	slotPromptSimilarity = 0.10
	// hostCacheTokens bounds the tokens kept in host memory (8 GiB holds
	// far more than any test sends).
	hostCacheTokens = 1 << 22
)

func newPromptCache(slots int, host bool, limit int) promptCache {
	c := promptCache{slots: make([]slotState, max(slots, 1)), host: host, limit: limit}
	if c.limit <= 0 {
		c.limit = hostCacheTokens
	}
	for i := range c.slots {
		c.slots[i] = slotState{used: -1, task: -1}
	}
	return c
}

// taken is how a request was served from the cache.
type taken struct {
	slot int
	// prefix is the common prefix reused; cached what was reused in all
	// (the prefix and the chunks), before the one token always processed.
	prefix, cached int
	chunks         []Chunk
	// restored says the state came from host memory; saved that the
	// slot's state was saved there first.
	restored, saved bool
	// how is llama-server's log line of the slot's selection.
	how string
}

// take readies a slot for prompt and says what of it the cache serves.
// id is the request's id_slot (-1: any); minChunk its n_cache_reuse when
// chunk reuse applies (0: the prefix only).
func (c *promptCache) take(prompt []uint32, id, minChunk int) taken {
	t := taken{slot: -1}
	update := false
	if id >= 0 {
		t.slot = id % len(c.slots)
	}
	// The slot whose cached prompt is most similar, when similar enough.
	best := 0.0
	for i := range c.slots {
		st := &c.slots[i]
		if id >= 0 && i != t.slot || len(st.tokens) == 0 {
			continue
		}
		sim := float64(commonPrefix(st.tokens, prompt)) / float64(max(len(prompt), 1))
		if sim > best && sim > slotPromptSimilarity {
			best, t.slot = sim, i
		}
	}
	switch {
	case id >= 0:
		update = len(c.slots[t.slot].tokens) > 0 // an empty slot is skipped
		t.how = fmt.Sprintf("selected slot by id (%d)", t.slot)
	case best > 0:
		keep := best * float64(len(prompt)) / float64(len(c.slots[t.slot].tokens))
		update = keep < 0.5
		t.how = fmt.Sprintf("selected slot by lcs similarity, sim_best = %.3f", best)
	default:
		t.slot = c.leastRecent()
		update = true
		t.how = "selected slot by LRU"
	}
	st := &c.slots[t.slot]
	if c.host {
		for i := range c.slots {
			if i != t.slot && len(c.slots[i].tokens) > 0 {
				c.keep(c.slots[i].tokens) // the other idle slots
				if c.unified {
					c.slots[i].tokens = nil
				}
			}
		}
		if update {
			t.saved = c.keep(st.tokens)
			t.restored = c.load(st, prompt)
		}
	}
	t.prefix = commonPrefix(st.tokens, prompt)
	t.cached = t.prefix
	if minChunk > 0 {
		t.cached, t.chunks = chunkReuse(st.tokens, prompt, t.prefix, minChunk)
	}
	return t
}

// leastRecent is the least recently used slot, an empty one first.
func (c *promptCache) leastRecent() int {
	at := 0
	for i, st := range c.slots {
		if st.used < c.slots[at].used {
			at = i
		}
	}
	return at
}

// chunkReuse runs llama.cpp's chunk scan over the cached tokens after the
// common prefix of n tokens: it returns how many leading tokens of prompt
// the cache then serves, and the chunks it shifted.
func chunkReuse(cached, prompt []uint32, n, minChunk int) (int, []Chunk) {
	var chunks []Chunk
	hc, hp := n, n
	for hc < len(cached) && hp < len(prompt) {
		m := 0
		for hc+m < len(cached) && hp+m < len(prompt) && cached[hc+m] == prompt[hp+m] {
			m++
		}
		if m >= minChunk {
			chunks = append(chunks, Chunk{Cache: hc, Prompt: hp, Size: m})
			hc += m
			hp += m
		} else {
			hc++
		}
	}
	return hp, chunks
}

// load replaces the slot's state with the saved one that serves prompt
// better on both counts (the share of the state kept, at least a quarter,
// and the share of the prompt served), and reports whether one did.
func (c *promptCache) load(st *slotState, prompt []uint32) bool {
	lcp := commonPrefix(st.tokens, prompt)
	keepBest, simBest := -1.0, float64(lcp)/float64(max(len(prompt), 1))
	if len(st.tokens) > 0 {
		keepBest = float64(lcp) / float64(len(st.tokens))
	}
	at := -1
	for i, k := range c.kept {
		n := commonPrefix(k, prompt)
		keep, sim := float64(n)/float64(len(k)), float64(n)/float64(max(len(prompt), 1))
		if keep < 0.25 {
			continue
		}
		if keepBest < keep && simBest < sim {
			keepBest, simBest, at = keep, sim, i
		}
	}
	if at < 0 {
		return false
	}
	st.tokens = c.kept[at]
	c.kept = slices.Delete(c.kept, at, at+1)
	return true
}

// store puts what slot holds after request req of prompt tokens.
func (c *promptCache) store(slot, req, prompt int, tokens []uint32) {
	c.slots[slot] = slotState{tokens: tokens, used: req, task: req, prompt: prompt}
}

// keep saves a state in host memory, unless a saved state holds it
// already, dropping the saved states it extends and the oldest beyond the
// limit. It reports whether it saved it.
func (c *promptCache) keep(st []uint32) bool {
	if len(st) == 0 {
		return false
	}
	for _, k := range c.kept {
		if len(k) >= len(st) && commonPrefix(k, st) == len(st) {
			return false // already kept, maybe in a longer state
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
	for total > c.limit && len(c.kept) > 1 {
		total -= len(c.kept[0])
		c.kept = c.kept[1:]
	}
	return true
}

// evict empties slot as another prompt taking it would: its state is
// saved in host memory first.
func (c *promptCache) evict(slot int) {
	if c.host {
		c.keep(c.slots[slot].tokens)
	}
	c.slots[slot].tokens = nil
}

// describe is the log line of what a request reused, in llama-server's
// words.
func (t taken) describe() []string {
	var out []string
	for _, ch := range t.chunks {
		out = append(out, fmt.Sprintf("reusing chunk with size %d, shifting KV cache [%d, %d) -> [%d, %d)",
			ch.Size, ch.Cache, ch.Cache+ch.Size, ch.Prompt, ch.Prompt+ch.Size))
	}
	return out
}
