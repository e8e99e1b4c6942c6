package gguf

import "math/rand/v2"

// RandomCtxTrain is the random model's training context (n_ctx_train).
const RandomCtxTrain = 32768

// Random is a llama model with 2 layers, n_embd 64 and random weights over
// the shared vocabulary, trained (so to speak) for RandomCtxTrain tokens.
// It loads in milliseconds and generates thousands of tokens a second on a
// CPU. What it writes is noise: it never calls a tool on purpose and may
// end a reply at any token, so tests bound it with max_tokens and check
// shapes, counts and caches, never words. The same seed gives the same
// file.
func Random(seed uint64) *Llama {
	v := NewVocab(DefaultMerges)
	m := NewLlama("reika-random", v, 64, 2, 4, 128, RandomCtxTrain, 10000)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	fill := func(s []float32, std float64) {
		for i := range s {
			s[i] = float32(r.NormFloat64() * std)
		}
	}
	fill(m.TokenEmbd, 0.5)
	fill(m.Output, 0.3)
	for i := range m.Blocks {
		b := &m.Blocks[i]
		for _, w := range [][]float32{b.AttnQ, b.AttnK, b.AttnV, b.AttnO, b.FFNGate, b.FFNUp, b.FFNDown} {
			fill(w, 0.1)
		}
	}
	return m
}
