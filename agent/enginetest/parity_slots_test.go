package enginetest

// The parity rows about llama-server's default slots (no -np: 4 slots
// sharing one KV cache): where a request goes when it names no slot, and
// what naming one keeps.

import (
	"encoding/json"
	"net/http"
	"testing"
)

var slotRows = []row{
	{name: "slots: a shed sharing less than a tenth goes to another slot; naming its slot keeps its rounds", slots: -1, check: func(t *testing.T, c *http.Client, in *instance) {
		// Rounds of about 1150 tokens on this side's tokenizer: three fill
		// most of the window; the shed keeps the last two and a recap.
		lines := max(10*1150/tokens(t, c, in, prose(80, 10)), 10)
		recap := map[string]any{"role": "user", "content": "<recap>\n" + prose(79, 4) + "</recap>"}
		chats := func(seed int64) (full, shed []any) {
			results := map[int]string{}
			for k := 1; k <= 3; k++ {
				results[k] = prose(seed*10+int64(k), lines)
			}
			return roundsChat(seed, []int{1, 2, 3}, results), roundsChat(seed, []int{2, 3}, results, recap)
		}
		// Naming its slot first (an empty slot restores nothing from host
		// memory), then a chat of its own naming none, so that host memory
		// holds nothing of it.
		full, shed := chats(81)
		a := complete(t, c, in, full, "id_slot", 0)
		named := complete(t, c, in, shed, "n_cache_reuse", 64, "id_slot", 0)
		full2, shed2 := chats(82)
		complete(t, c, in, full2)
		free := complete(t, c, in, shed2, "n_cache_reuse", 64)
		fullIDs, shedIDs := promptIDs(t, c, in, full), promptIDs(t, c, in, shed)
		shared := 0
		for shared < min(len(fullIDs), len(shedIDs)) && fullIDs[shared] == shedIDs[shared] {
			shared++
		}
		rt := tokens(t, c, in, recap["content"].(string))
		t.Logf("a chat of %d tokens, then a shed of %d sharing a prefix of %d (%.3f; the recap is %d): naming no slot %d reused, %d processed; naming the chat's slot %d reused, %d processed",
			a.prompt, free.prompt, shared, float64(shared)/float64(free.prompt), rt, free.cached, free.processed, named.cached, named.processed)
		if float64(shared) >= 0.1*float64(free.prompt) {
			t.Fatalf("the shed shares %d of %d tokens with the chat: not below a tenth", shared, free.prompt)
		}
		if free.processed < free.prompt-shared-8 {
			t.Errorf("naming no slot, %d of %d tokens were processed: the shed stayed on the chat's slot", free.processed, free.prompt)
		}
		if named.processed > rt+24 {
			t.Errorf("naming the chat's slot, %d tokens were processed, want about the recap's %d", named.processed, rt)
		}
	}},
	{name: "slots: after another slot's task, naming the cleared slot restores nothing; naming none restores", slots: -1, check: func(t *testing.T, c *http.Client, in *instance) {
		more := map[string]any{"role": "user", "content": "And the next part?"}
		var got [2]cacheCounts
		for i, name := range []bool{true, false} {
			seed := int64(90 + 2*i)
			chat := roundsChat(seed, []int{1, 2}, nil)
			complete(t, c, in, chat, "id_slot", 0)
			complete(t, c, in, roundsChat(seed+1, []int{1}, nil), "id_slot", 1) // clears slot 0, saving it in host memory
			if name {
				got[i] = complete(t, c, in, append(chat, more), "id_slot", 0)
			} else {
				got[i] = complete(t, c, in, append(chat, more))
			}
		}
		t.Logf("the chat again with a question, after another slot's task: naming its slot %d of %d reused; naming none %d of %d", got[0].cached, got[0].prompt, got[1].cached, got[1].prompt)
		if got[0].cached > got[0].prompt/10 {
			t.Errorf("naming the cleared slot reused %d of %d tokens", got[0].cached, got[0].prompt)
		}
		if got[1].processed > 32 {
			t.Errorf("naming no slot processed %d of %d tokens: nothing was restored", got[1].processed, got[1].prompt)
		}
	}},
}

// promptIDs are the tokens of a chat's prompt as the side renders it (POST
// /apply-template with the tools) and tokenizes it (POST /tokenize).
func promptIDs(t *testing.T, c *http.Client, in *instance, msgs []any) []int {
	t.Helper()
	e := call(t, c, "POST", in.root+"/apply-template", "", map[string]any{"messages": msgs, "tools": parityTools})
	prompt, _ := e.json(t)["prompt"].(string)
	e = call(t, c, "POST", in.root+"/tokenize", "", map[string]any{"content": prompt})
	var r struct {
		Tokens []int `json:"tokens"`
	}
	if err := json.Unmarshal(e.body, &r); err != nil || prompt == "" {
		t.Fatalf("apply-template and tokenize: %v %s", err, e.body)
	}
	return r.Tokens
}
