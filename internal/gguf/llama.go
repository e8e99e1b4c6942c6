package gguf

import "fmt"

// Llama is a llama-architecture model: its hyperparameters, vocabulary and
// weights. Matrices are stored as GGML lays them out (see Tensor): a
// projection from n inputs to m outputs is m rows of n weights.
type Llama struct {
	Name     string
	Embd     int // n_embd
	Layers   int // block_count
	Heads    int // attention.head_count (and head_count_kv)
	FF       int // feed_forward_length
	CtxTrain int // context_length, the training context (n_ctx_train)
	RopeBase float32
	Vocab    *Vocab
	// SlidingWindow, when > 0, writes the model as llama.cpp's gemma2
	// architecture instead (the same weights, a norm of ones after
	// attention and after the feed-forward part, the output tied to the
	// token embeddings), whose every other layer
	// attends only to the last SlidingWindow tokens. Its KV cache then
	// cannot shift (llama-server refuses n_cache_reuse for it, logging
	// "cache reuse is not supported") unless the server is given
	// --swa-full.
	SlidingWindow int

	// TokenEmbd is Vocab × Embd; Output is Vocab × Embd (one row of weights
	// per token); OutputNorm is Embd.
	TokenEmbd, Output, OutputNorm []float32
	Blocks                        []Block
}

// Block is one transformer layer's weights.
type Block struct {
	AttnNorm                   []float32 // Embd
	AttnQ, AttnK, AttnV, AttnO []float32 // Embd × Embd
	FFNNorm                    []float32 // Embd
	FFNGate, FFNUp             []float32 // FF rows of Embd
	FFNDown                    []float32 // Embd rows of FF
}

// headDim is the width of one attention head.
func (m *Llama) headDim() int { return m.Embd / m.Heads }

// NewLlama returns a model with every weight zero and every norm one.
func NewLlama(name string, v *Vocab, embd, layers, heads, ff, ctxTrain int, ropeBase float32) *Llama {
	if embd%heads != 0 || (embd/heads)%2 != 0 {
		panic(fmt.Sprintf("gguf: n_embd %d does not split into %d heads of even width", embd, heads))
	}
	n := len(v.Tokens)
	m := &Llama{Name: name, Embd: embd, Layers: layers, Heads: heads, FF: ff, CtxTrain: ctxTrain, RopeBase: ropeBase, Vocab: v,
		TokenEmbd: make([]float32, n*embd), Output: make([]float32, n*embd), OutputNorm: ones(embd)}
	for range layers {
		m.Blocks = append(m.Blocks, Block{
			AttnNorm: ones(embd), FFNNorm: ones(embd),
			AttnQ: make([]float32, embd*embd), AttnK: make([]float32, embd*embd),
			AttnV: make([]float32, embd*embd), AttnO: make([]float32, embd*embd),
			FFNGate: make([]float32, ff*embd), FFNUp: make([]float32, ff*embd), FFNDown: make([]float32, embd*ff),
		})
	}
	return m
}

func ones(n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

// RMSEps is the models' attention.layer_norm_rms_epsilon.
const RMSEps = 1e-6

// File assembles the GGUF file of the model. eos is the end-of-generation
// token (<|im_end|> for both models).
func (m *Llama) File() *File {
	v := m.Vocab
	f := &File{}
	arch := "llama"
	if m.SlidingWindow > 0 {
		arch = "gemma2"
	}
	f.Set("general.architecture", arch)
	f.Set("general.name", m.Name)
	f.Set("general.alignment", uint32(Alignment))
	f.Set(arch+".context_length", uint32(m.CtxTrain))
	f.Set(arch+".embedding_length", uint32(m.Embd))
	f.Set(arch+".block_count", uint32(m.Layers))
	f.Set(arch+".feed_forward_length", uint32(m.FF))
	f.Set(arch+".attention.head_count", uint32(m.Heads))
	f.Set(arch+".attention.head_count_kv", uint32(m.Heads))
	f.Set(arch+".rope.dimension_count", uint32(m.headDim()))
	f.Set(arch+".rope.freq_base", m.RopeBase)
	f.Set(arch+".attention.layer_norm_rms_epsilon", float32(RMSEps))
	f.Set(arch+".vocab_size", uint32(len(v.Tokens)))
	if m.SlidingWindow > 0 {
		f.Set(arch+".attention.sliding_window", uint32(m.SlidingWindow))
	}
	f.Set("tokenizer.ggml.model", "gpt2")
	f.Set("tokenizer.ggml.pre", "qwen2")
	f.Set("tokenizer.ggml.tokens", v.Tokens)
	f.Set("tokenizer.ggml.token_type", v.Types)
	f.Set("tokenizer.ggml.merges", v.Merges)
	f.Set("tokenizer.ggml.bos_token_id", uint32(v.ID("<|endoftext|>")))
	f.Set("tokenizer.ggml.eos_token_id", uint32(v.ID(ImEnd)))
	f.Set("tokenizer.ggml.padding_token_id", uint32(v.ID("<|endoftext|>")))
	f.Set("tokenizer.ggml.add_bos_token", false)
	f.Set("tokenizer.chat_template", ChatTemplate)

	n, e := uint64(len(v.Tokens)), uint64(m.Embd)
	f.Add("token_embd.weight", m.TokenEmbd, e, n)
	f.Add("output_norm.weight", m.OutputNorm, e)
	if m.SlidingWindow == 0 {
		f.Add("output.weight", m.Output, e, n) // gemma2 reads token_embd instead
	}
	for i, b := range m.Blocks {
		p := fmt.Sprintf("blk.%d.", i)
		ff := uint64(m.FF)
		f.Add(p+"attn_norm.weight", b.AttnNorm, e)
		f.Add(p+"attn_q.weight", b.AttnQ, e, e)
		f.Add(p+"attn_k.weight", b.AttnK, e, e)
		f.Add(p+"attn_v.weight", b.AttnV, e, e)
		f.Add(p+"attn_output.weight", b.AttnO, e, e)
		f.Add(p+"ffn_norm.weight", b.FFNNorm, e)
		f.Add(p+"ffn_gate.weight", b.FFNGate, e, ff)
		f.Add(p+"ffn_up.weight", b.FFNUp, e, ff)
		f.Add(p+"ffn_down.weight", b.FFNDown, ff, e)
		if m.SlidingWindow > 0 {
			f.Add(p+"post_attention_norm.weight", ones(m.Embd), e)
			f.Add(p+"post_ffw_norm.weight", ones(m.Embd), e)
		}
	}
	return f
}

// WriteFile writes the model's GGUF file.
func (m *Llama) WriteFile(path string) error { return m.File().WriteFile(path) }
