package enginetest

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestChunkReuse(t *testing.T) {
	seq := func(s string) []uint32 {
		var out []uint32
		for _, c := range s {
			out = append(out, uint32(c))
		}
		return out
	}
	for _, tc := range []struct {
		name, cached, prompt string
		min                  int
		want                 int
		chunks               []Chunk
	}{
		// abcd efgh ijkl: "efgh" deleted, the rest shifted into place.
		{"deletion", "abcdefghijklmnop", "abcdijklmnopXYZ", 4, 12, []Chunk{{Cache: 8, Prompt: 4, Size: 8}}},
		{"two deletions", "abcdefghijklmnopqrst", "abcdijklqrstZ", 4, 12, []Chunk{{8, 4, 4}, {16, 8, 4}}},
		// An inserted token stops the scan: nothing after it is reused.
		{"insertion", "abcdefghijklmnop", "abcdXefghijklmnop", 4, 4, nil},
		// A run shorter than the chunk size is not reused, and the prompt
		// position never moves without a match.
		{"short run", "abcdefghijklmnop", "abcdijkQmnop", 4, 4, nil},
		{"off", "abcdefghijklmnop", "abcdijklmnop", 0, 4, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, p := seq(tc.cached), seq(tc.prompt)
			prefix := commonPrefix(c, p)
			got, chunks := prefix, []Chunk(nil)
			if tc.min > 0 {
				got, chunks = chunkReuse(c, p, prefix, tc.min)
			}
			if got != tc.want || !slices.Equal(chunks, tc.chunks) {
				t.Errorf("reused %d with chunks %v, want %d with %v", got, chunks, tc.want, tc.chunks)
			}
		})
	}
}

// longChat is a chat whose rounds are long enough to reuse in chunks.
func longChat(rounds ...string) []msg {
	out := []msg{{"role": "system", "content": "You are exact."}, user("Read the parts.")}
	for _, r := range rounds {
		out = append(out, msg{"role": "assistant", "content": "Reading " + r + "."}, user(strings.Repeat("Part "+r+" says something new. ", 40)))
	}
	return out
}

func TestCacheReuseOption(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    Options
		request any // n_cache_reuse of the second request, nil: none
		chunked bool
		logged  string
	}{
		{"off by default", Options{}, nil, false, ""},
		{"--cache-reuse", Options{CacheReuse: 32}, nil, true, "reusing chunk with size"},
		{"per request", Options{}, 32, true, "reusing chunk with size"},
		{"per request 0 beats --cache-reuse", Options{CacheReuse: 32}, 0, false, ""},
		{"a model that cannot shift", Options{CacheReuse: 32, NoShift: true}, 32, false, "cache reuse is not supported - ignoring n_cache_reuse = 32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := start(t, tc.opts)
			u := s.URL() + "/chat/completions"
			post(t, c, u, chatBody(longChat("one", "two", "three")...))
			body := chatBody(longChat("one", "three")...)
			if tc.request != nil {
				body["n_cache_reuse"] = tc.request
			}
			post(t, c, u, body)
			recs := s.Requests()
			last := recs[len(recs)-1]
			// Without chunks the reuse ends where part two was.
			if got := len(last.Chunks) > 0; got != tc.chunked {
				t.Errorf("chunks %v, want chunked %v", last.Chunks, tc.chunked)
			}
			if tc.chunked && last.PromptN > 8 {
				t.Errorf("a pure deletion cost %d tokens with chunk reuse", last.PromptN)
			}
			if !tc.chunked && last.PromptN < 100 {
				t.Errorf("without chunk reuse only %d tokens were processed after the deletion", last.PromptN)
			}
			if log := s.Log(); tc.logged != "" && !strings.Contains(log, tc.logged) || tc.logged == "" && log != "" {
				t.Errorf("log %q, want %q", log, tc.logged)
			}
			if tc.opts.NoShift && !strings.Contains(s.Log(), "cache_reuse is not supported by this context, it will be disabled") {
				t.Errorf("no start-up warning for --cache-reuse on a model that cannot shift: %q", s.Log())
			}
		})
	}
}

func TestSlots(t *testing.T) {
	s, c := start(t, Options{Slots: 2})
	u := s.URL() + "/chat/completions"
	a := chatBody(msg{"role": "system", "content": "Agent A, main session."}, user(strings.Repeat("The main task is long. ", 30)))
	b := chatBody(msg{"role": "system", "content": "A subagent with its own task."}, user(strings.Repeat("The side task. ", 30)))
	post(t, c, u, a)
	post(t, c, u, b)
	post(t, c, u, a)
	b["id_slot"] = 0 // pinned on the main slot: the main prompt goes to host memory
	post(t, c, u, b)
	delete(b, "id_slot")
	post(t, c, u, a)
	recs := s.Requests()
	slotsOf := []int{}
	for _, r := range recs {
		slotsOf = append(slotsOf, r.Slot)
	}
	// The last goes to the slot used least recently (neither holds a
	// prompt like it), which takes the main prompt back from host memory.
	if want := []int{0, 1, 0, 0, 1}; !slices.Equal(slotsOf, want) {
		t.Errorf("slots %v, want %v", slotsOf, want)
	}
	if r := recs[2]; r.CacheN != r.PromptTokens-1 {
		t.Errorf("the main prompt on its own slot: %d of %d reused", r.CacheN, r.PromptTokens)
	}
	if r := recs[4]; !r.Restored || r.CacheN != r.PromptTokens-1 {
		t.Errorf("the main prompt after a subagent took its slot: restored %v, %d of %d reused", r.Restored, r.CacheN, r.PromptTokens)
	}
	resp, err := c.Get(s.RootURL() + "/slots")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var slots []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&slots); err != nil {
		t.Fatal(err)
	}
	if len(slots) != 2 || num(slots[0]["n_prompt_tokens"]) != recs[3].PromptTokens || num(slots[1]["n_prompt_tokens"]) != recs[4].PromptTokens {
		t.Errorf("/slots %v", slots)
	}
}
