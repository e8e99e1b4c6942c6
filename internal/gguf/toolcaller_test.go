package gguf

import (
	"math/rand/v2"
	"testing"
)

func testCaller(t *testing.T) (*Llama, ToolCaller) {
	t.Helper()
	tc := ToolCaller{
		Default: []string{"Nothing to do."},
		Actions: []Action{
			{Signal: "[[next:a]]", Pieces: []string{CallText("read", `{"path": "a.txt"}`)}},
			{Signal: "[[next:b]]", Pieces: []string{CallText("read", `{"path": "b.txt"}`)}},
			{Signal: "[[split]]", Pieces: []string{"<tool_call>\n{\"name\": \"read\", ", "\"arguments\": {\"path\": ", "\"c.txt\"}}\n</tool_call>"}},
			{Signal: "[[done]]", Pieces: []string{"Every file", " was read."}},
		},
	}
	m, err := tc.Model()
	if err != nil {
		t.Fatal(err)
	}
	return m, tc
}

// filler is n ordinary tokens (byte and merge tokens, never a signal, a
// piece or a control token).
func filler(r *rand.Rand, m *Llama, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = r.IntN(256 + len(m.Vocab.Merges))
	}
	return out
}

func TestToolCallerPicks(t *testing.T) {
	m, tc := testCaller(t)
	v := m.Vocab
	r := rand.New(rand.NewPCG(1, 2))
	nl := v.ID(ByteEncode("\n"))
	sig := func(s string) int { return v.ID(s) }
	piece := func(p string) int { return v.ID(p) }
	genPrompt := []int{v.ID(ImEnd), nl, v.ID(ImStart)}
	genPrompt = append(genPrompt, filler(r, m, 2)...) // "assistant"
	genPrompt = append(genPrompt, nl)

	cases := []struct {
		name string
		ctx  []int
		want int
	}{
		{"no signal: the default", append(filler(r, m, 300), genPrompt...), piece(tc.Default[0])},
		{"one signal", concat(filler(r, m, 200), []int{sig("[[next:a]]")}, filler(r, m, 150), genPrompt), piece(tc.Actions[0].Pieces[0])},
		{"the newest of two signals", concat(filler(r, m, 100), []int{sig("[[next:a]]")}, filler(r, m, 120), []int{sig("[[next:b]]")}, filler(r, m, 80), genPrompt), piece(tc.Actions[1].Pieces[0])},
		{"the newest of two, far back", concat([]int{sig("[[next:b]]")}, filler(r, m, 150), []int{sig("[[next:a]]")}, filler(r, m, 2500), genPrompt), piece(tc.Actions[0].Pieces[0])},
		{"the newest of three, close together", concat(filler(r, m, 50), []int{sig("[[done]]")}, filler(r, m, 100), []int{sig("[[next:a]]")}, filler(r, m, 100), []int{sig("[[split]]")}, filler(r, m, 30), genPrompt), piece(tc.Actions[2].Pieces[0])},
	}
	for _, c := range cases {
		got, margin := argmax(m.forward(c.ctx))
		if got != c.want {
			t.Errorf("%s: next token %d %q, want %d %q", c.name, got, v.Tokens[got], c.want, v.Tokens[c.want])
		} else if margin < 20 {
			t.Errorf("%s: margin %.1f nats, want at least 20", c.name, margin)
		}
	}
}

func TestToolCallerChains(t *testing.T) {
	m, tc := testCaller(t)
	v := m.Vocab
	r := rand.New(rand.NewPCG(3, 4))
	nl := v.ID(ByteEncode("\n"))
	for _, a := range append([]Action{{Pieces: tc.Default}}, tc.Actions...) {
		ctx := filler(r, m, 100)
		if a.Signal != "" {
			ctx = append(ctx, v.ID(a.Signal))
		}
		ctx = append(append(ctx, filler(r, m, 40)...), nl)
		var got []int
		for range len(a.Pieces) + 1 {
			next, margin := argmax(m.forward(ctx))
			if margin < 20 {
				t.Errorf("%q: margin %.1f after %d tokens", a.Signal, margin, len(got))
			}
			got = append(got, next)
			ctx = append(ctx, next)
		}
		for i, p := range a.Pieces {
			if want := v.ID(p); got[i] != want {
				t.Errorf("%q: token %d is %q, want %q", a.Signal, i, v.Tokens[got[i]], v.Tokens[want])
			}
		}
		if last := got[len(got)-1]; last != v.ID(ImEnd) {
			t.Errorf("%q: ends with %q, want %s", a.Signal, v.Tokens[last], ImEnd)
		}
	}
}

func concat(parts ...[]int) []int {
	var out []int
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
