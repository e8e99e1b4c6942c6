package enginetest

// The rows of the parity table about llama-server's cache: the chunk scan
// of n_cache_reuse on the request sequences of issue 14's table, a tool
// result cut to its first line (the shape of reika's shed), and requests
// spread over slots. Each row logs both sides' numbers; tokenizers differ,
// so the checks compare each side with its own counts.

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"strings"
	"testing"
)

// proseWords make the rows' texts: varied enough that no run of a few
// tokens repeats by chance.
var proseWords = strings.Fields(`the engine keeps every prompt it saw in a slot and reuses the longest part
that a new request shares with it while chunks after the first difference need a scan that shifts their
entries into place so deletions cost nothing yet an insertion stops the reuse where it stands agents read
files grep for names run tests edit code and answer with line numbers quoted from what they read before`)

// prose is n lines of words drawn by seed, each line ending in a newline.
func prose(seed int64, lines int) string {
	r := rand.New(rand.NewSource(seed))
	var b strings.Builder
	for i := 0; i < lines; i++ {
		fmt.Fprintf(&b, "%d.", r.Intn(1000))
		for j := 0; j < 9; j++ {
			b.WriteString(" " + proseWords[r.Intn(len(proseWords))])
		}
		b.WriteString(".\n")
	}
	return b.String()
}

// roundsChat is a chat of a system message, a task and rounds of reads:
// round k is a call to read pK.txt and its result, text of seed and k.
// results[k] replaces the result of round k when set; more messages
// follow the rounds.
func roundsChat(seed int64, rounds []int, results map[int]string, more ...any) []any {
	msgs := partsChat(seed)
	for _, k := range rounds {
		text, ok := results[k]
		if !ok {
			text = readResult(seed, k)
		}
		msgs = append(msgs, readRound(seed, k, "", text)...)
	}
	return append(msgs, more...)
}

// partsChat is the opening of a chat of seed, a system message and the
// task, then the messages of parts in order.
func partsChat(seed int64, parts ...[]any) []any {
	msgs := []any{
		map[string]any{"role": "system", "content": fmt.Sprintf("You are coding agent %d.", seed)},
		map[string]any{"role": "user", "content": "Read the parts and explain them."},
	}
	for _, p := range parts {
		msgs = append(msgs, p...)
	}
	return msgs
}

// readRound is round k of a chat of seed: a reply of text calling read on
// pK.txt, and result.
func readRound(seed int64, k int, text, result string) []any {
	id := fmt.Sprintf("call_%d_%d", seed, k)
	return []any{
		map[string]any{"role": "assistant", "content": text, "tool_calls": []any{map[string]any{"id": id, "type": "function",
			"function": map[string]any{"name": "read", "arguments": fmt.Sprintf(`{"path": "p%d.txt"}`, k)}}}},
		map[string]any{"role": "tool", "tool_call_id": id, "content": result},
	}
}

// readResult is the result of reading part k: a header line and prose.
func readResult(seed int64, k int) string {
	return fmt.Sprintf("p%d.txt lines 1-24 of 24\n", k) + prose(seed*100+int64(k), 24)
}

// cacheCounts are one answer's prompt tokens, reused and processed.
type cacheCounts struct{ prompt, cached, processed int }

// complete sends a chat with max_tokens 1 (so the slot keeps the prompt
// alone) and more fields, and returns its counts.
func complete(t *testing.T, c *http.Client, in *instance, msgs []any, more ...any) cacheCounts {
	t.Helper()
	body := map[string]any{"model": DefaultModel, "tools": parityTools, "messages": msgs, "max_tokens": 1}
	for i := 0; i+1 < len(more); i += 2 {
		body[more[i].(string)] = more[i+1]
	}
	e := call(t, c, "POST", in.root+"/v1/chat/completions", "", body)
	m := e.json(t)
	tm, ok := m["timings"].(map[string]any)
	if e.status != 200 || !ok {
		t.Fatalf("%d %s", e.status, e.body)
	}
	return cacheCounts{n(m["usage"].(map[string]any)["prompt_tokens"]), n(tm["cache_n"]), n(tm["prompt_n"])}
}

// tokens is the side's count of text (POST /tokenize).
func tokens(t *testing.T, c *http.Client, in *instance, text string) int {
	t.Helper()
	e := call(t, c, "POST", in.root+"/tokenize", "", map[string]any{"content": text})
	var r struct {
		Tokens []json.RawMessage `json:"tokens"`
	}
	if err := json.Unmarshal(e.body, &r); err != nil || e.status != 200 {
		t.Fatalf("tokenize: %d %s", e.status, e.body)
	}
	return len(r.Tokens)
}

// chunkReuseSizes are the n_cache_reuse values the rows compare: off, and
// the 64 of issue 14's measurements.
var chunkReuseSizes = []int{0, 64}

var cacheRows = []row{
	restoreRow,
	openingRow,
	{name: "chunk reuse: the oldest rounds deleted, a recap appended after the kept ones", check: func(t *testing.T, c *http.Client, in *instance) {
		recap := "<recap>\n" + prose(7, 6) + "</recap>"
		for i, reuse := range chunkReuseSizes {
			seed := int64(10 + i)
			full := complete(t, c, in, roundsChat(seed, []int{1, 2, 3, 4}, nil))
			got := complete(t, c, in, roundsChat(seed, []int{3, 4}, nil, map[string]any{"role": "user", "content": recap}), "n_cache_reuse", reuse)
			rt := tokens(t, c, in, recap)
			t.Logf("n_cache_reuse %d: a chat of %d tokens, then %d: %d reused, %d processed (the recap is %d)", reuse, full.prompt, got.prompt, got.cached, got.processed, rt)
			switch {
			case reuse > 0 && got.processed > rt+24:
				t.Errorf("with chunk reuse %d tokens were processed, want about the recap's %d", got.processed, rt)
			case reuse == 0 && got.processed < got.prompt/2:
				t.Errorf("without chunk reuse only %d of %d tokens were processed", got.processed, got.prompt)
			}
		}
	}},
	{name: "chunk reuse: text deleted inside a message, new text appended", check: func(t *testing.T, c *http.Client, in *instance) {
		for i, reuse := range chunkReuseSizes {
			seed := int64(20 + i*10)
			x, y, z, w := prose(seed, 12), prose(seed+1, 12), prose(seed+2, 12), prose(seed+3, 8)
			first := complete(t, c, in, []any{map[string]any{"role": "user", "content": x + y + z}})
			got := complete(t, c, in, []any{map[string]any{"role": "user", "content": x + z}, map[string]any{"role": "user", "content": w}}, "n_cache_reuse", reuse)
			wt, zt := tokens(t, c, in, w), tokens(t, c, in, z)
			t.Logf("n_cache_reuse %d: X+Y+Z of %d tokens, then X+Z and W (%d tokens; Z %d): %d reused, %d processed", reuse, first.prompt, wt, zt, got.cached, got.processed)
			switch {
			case reuse > 0 && got.processed > wt+24:
				t.Errorf("with chunk reuse %d tokens were processed, want about W's %d", got.processed, wt)
			case reuse == 0 && got.processed < zt+wt:
				t.Errorf("without chunk reuse %d tokens were processed, want Z and W again (%d)", got.processed, zt+wt)
			}
		}
	}},
	{name: "chunk reuse: an insertion stops it (Y replaced in place by a summary)", check: func(t *testing.T, c *http.Client, in *instance) {
		for i, reuse := range chunkReuseSizes {
			seed := int64(40 + i*10)
			x, y, z := prose(seed, 12), prose(seed+1, 12), prose(seed+2, 12)
			summary := "(Y: twelve lines about caches, summarised.)\n"
			first := complete(t, c, in, []any{map[string]any{"role": "user", "content": x + y + z}})
			got := complete(t, c, in, []any{map[string]any{"role": "user", "content": x + summary + z}}, "n_cache_reuse", reuse)
			zt := tokens(t, c, in, z)
			t.Logf("n_cache_reuse %d: X+Y+Z of %d tokens, then X+S+Z (Z %d): %d reused, %d processed", reuse, first.prompt, zt, got.cached, got.processed)
			if got.processed < zt {
				t.Errorf("n_cache_reuse %d: %d tokens processed after an insertion, want Z's %d again at least", reuse, got.processed, zt)
			}
		}
	}},
	{name: "chunk reuse: a result cut to its first line, the rounds after it reused", check: func(t *testing.T, c *http.Client, in *instance) {
		for i, reuse := range chunkReuseSizes {
			seed := int64(60 + i)
			full := complete(t, c, in, roundsChat(seed, []int{1, 2, 3}, nil))
			head := strings.SplitN(readResult(seed, 1), "\n", 2)[0]
			got := complete(t, c, in, roundsChat(seed, []int{1, 2, 3}, map[int]string{1: head}), "n_cache_reuse", reuse)
			t.Logf("n_cache_reuse %d: %d tokens, then round 1's result cut to its first line %q: %d of %d reused, %d processed", reuse, full.prompt, head, got.cached, got.prompt, got.processed)
			switch {
			case reuse > 0 && got.processed > 24:
				t.Errorf("with chunk reuse %d tokens were processed after a pure deletion", got.processed)
			case reuse == 0 && got.processed < got.prompt/2:
				t.Errorf("without chunk reuse only %d of %d tokens were processed", got.processed, got.prompt)
			}
		}
	}},
	{name: "slots: requests spread over slots, id_slot picks one", slots: 2, check: func(t *testing.T, c *http.Client, in *instance) {
		props := call(t, c, "GET", in.root+"/props", "", nil).json(t)
		if n(props["total_slots"]) != 2 {
			t.Errorf("total_slots %v", props["total_slots"])
		}
		slots := func() []map[string]any {
			var out []map[string]any
			e := call(t, c, "GET", in.root+"/slots", "", nil)
			if err := json.Unmarshal(e.body, &out); err != nil {
				t.Fatalf("/slots: %s", e.body)
			}
			return out
		}
		if s := slots(); len(s) != 2 || n(s[1]["id"]) != 1 || n(s[1]["n_ctx"]) != parityWindow {
			t.Fatalf("/slots %v", s)
		}
		// Prompts that differ from their first token (the system message
		// comes first): the second goes to the free slot. (Prompts that
		// share more than a tenth go to the same slot.)
		a := []any{map[string]any{"role": "system", "content": "You are agent A."}, map[string]any{"role": "user", "content": prose(80, 10)}}
		b := []any{map[string]any{"role": "system", "content": "Another agent, B."}, map[string]any{"role": "user", "content": prose(81, 10)}}
		complete(t, c, in, a)
		complete(t, c, in, b)
		s := slots()
		if s[0]["id_task"] == nil || s[1]["id_task"] == nil {
			t.Errorf("two different prompts did not take both slots: %v", s)
		}
		if got := complete(t, c, in, a); got.cached != got.prompt-1 {
			t.Errorf("the first prompt again: %d of %d reused", got.cached, got.prompt)
		}
		for id := range 2 {
			d := []any{map[string]any{"role": "system", "content": fmt.Sprintf("Agent %d.", id)}, map[string]any{"role": "user", "content": prose(int64(90+id), 6)}}
			got := complete(t, c, in, d, "id_slot", id)
			if s := slots(); n(s[id]["n_prompt_tokens"]) != got.prompt {
				t.Errorf("id_slot %d: slot %d holds a prompt of %v tokens, the request had %d", id, id, s[id]["n_prompt_tokens"], got.prompt)
			}
		}
	}},
}

// restoreRow: llama-server's host memory chooses the state to restore by
// the common prefix alone, so an older prompt that shares a few more
// tokens of it wins over the slot's own, which would have served the rest
// in chunks; with --cache-ram 0 the slot stays and its chunks are reused.
var restoreRow = row{name: "chunk reuse: host memory restores an older prompt that shares a longer prefix", own: true, check: func(t *testing.T, c *http.Client, in *instance) {
	opening := "The user wants to know how the parts fit together.\n" + prose(97, 3)
	round := func(seed int64, k int, text string) []any {
		result := readResult(seed, k)
		if k == 9 {
			result = "p9.txt lines 1-1 of 1\n1. short.\n"
		}
		return readRound(seed, k, text, result)
	}
	chat := func(rounds ...[]any) []any { return partsChat(99, rounds...) }
	// A short prompt whose first round opens as round 3 will, then the long one.
	complete(t, c, in, chat(round(99, 9, opening+"Start with part nine.")))
	complete(t, c, in, chat(round(99, 1, "Part one first."), round(99, 2, "Then two."), round(99, 3, opening+"Now three."), round(99, 4, "And four.")))
	recap := "<recap>\n" + prose(98, 4) + "</recap>"
	got := complete(t, c, in, append(chat(round(99, 3, opening+"Now three."), round(99, 4, "And four.")), map[string]any{"role": "user", "content": recap}), "n_cache_reuse", 64)
	rt := tokens(t, c, in, recap)
	t.Logf("rounds 1-2 deleted, a recap of %d tokens appended: %d of %d reused, %d processed", rt, got.cached, got.prompt, got.processed)
	if got.processed < got.prompt/2 {
		t.Errorf("%d of %d tokens processed: the slot's chunks were reused, not an older prompt restored", got.processed, got.prompt)
	}
}}

// openingRow: the layout reika's folds use against restoreRow's trap
// (ctxwin's foldMarks). An event's message opens with a line of its own
// tag; a fold keeps that line where it was and deletes from it on, so an
// older prompt held in host memory, with a round where the line is, shares
// no more with the request than the slot does: the server keeps the slot,
// and its chunks serve the kept rounds.
var openingRow = row{name: "chunk reuse: a fold that keeps an event's tagged opening keeps the slot", own: true, check: func(t *testing.T, c *http.Client, in *instance) {
	opening := "The user wants to know how the parts fit together.\n" + prose(96, 3)
	round := func(k int, text string) []any { return readRound(96, k, text, readResult(96, k)) }
	chat := func(parts ...[]any) []any { return partsChat(96, parts...) }
	user := func(text string) []any { return []any{map[string]any{"role": "user", "content": text}} }
	line := "K [context] To fit the context window, older tool results were shed."
	shed := user(line + "\nShed, each keeping only its first line where it was:\n" + prose(95, 3))
	// The trap of restoreRow: a short prompt whose first round opens as
	// round 3 will, then the long one, with an event's message after round 2.
	complete(t, c, in, chat(round(9, opening+"Start with part nine.")))
	complete(t, c, in, chat(round(1, "Part one first."), round(2, "Then two."), shed, round(3, opening+"Now three."), round(4, "And four.")))
	recap := "L [context] To fit the context window, older rounds were folded into the recap below.\n<recap>\n" + prose(94, 4) + "</recap>"
	got := complete(t, c, in, chat(user(line), round(3, opening+"Now three."), round(4, "And four."), user(recap)), "n_cache_reuse", 8)
	rt := tokens(t, c, in, recap)
	t.Logf("rounds 1-2 deleted, the event's opening kept, a recap of %d tokens appended: %d of %d reused, %d processed", rt, got.cached, got.prompt, got.processed)
	if got.processed > rt+rt/2+16 {
		t.Errorf("%d of %d tokens processed, the recap is %d: an older prompt was restored, or the chunks after the opening were not reused", got.processed, got.prompt, rt)
	}
}}
