package gguf

import "math"

// forward is a reference forward pass of a Llama as llama.cpp computes it
// (RMSNorm, rotary embeddings of the "normal" kind on adjacent pairs, causal
// attention scaled by 1/sqrt(head width), SwiGLU feed-forward, output
// norm and projection), in float64. It returns the logits after the last
// token.
func (m *Llama) forward(tokens []int) []float64 {
	E, n := m.Embd, len(tokens)
	hd := m.headDim()
	h := make([][]float64, n)
	for p, t := range tokens {
		h[p] = make([]float64, E)
		for i := range E {
			h[p][i] = float64(m.TokenEmbd[t*E+i])
		}
	}
	for li, b := range m.Blocks {
		last := li == len(m.Blocks)-1
		xs := make([][]float64, n)
		q, k, v := make([][]float64, n), make([][]float64, n), make([][]float64, n)
		for p := range n {
			xs[p] = rmsnorm(h[p], b.AttnNorm)
			q[p], k[p], v[p] = matvec(b.AttnQ, xs[p], E), matvec(b.AttnK, xs[p], E), matvec(b.AttnV, xs[p], E)
			rope(q[p], p, hd, float64(m.RopeBase))
			rope(k[p], p, hd, float64(m.RopeBase))
		}
		from := 0
		if last {
			from = n - 1 // only the last position's output is needed
		}
		for p := from; p < n; p++ {
			att := make([]float64, E)
			for head := range m.Heads {
				lo := head * hd
				scores := make([]float64, p+1)
				mx := math.Inf(-1)
				for s := 0; s <= p; s++ {
					d := 0.0
					for i := lo; i < lo+hd; i++ {
						d += q[p][i] * k[s][i]
					}
					scores[s] = d / math.Sqrt(float64(hd))
					mx = max(mx, scores[s])
				}
				sum := 0.0
				for s := range scores {
					scores[s] = math.Exp(scores[s] - mx)
					sum += scores[s]
				}
				for s := range scores {
					for i := lo; i < lo+hd; i++ {
						att[i] += scores[s] / sum * v[s][i]
					}
				}
			}
			o := matvec(b.AttnO, att, E)
			for i := range E {
				h[p][i] += o[i]
			}
			x := rmsnorm(h[p], b.FFNNorm)
			gate, up := matvec(b.FFNGate, x, m.FF), matvec(b.FFNUp, x, m.FF)
			for i := range gate {
				gate[i] = gate[i] / (1 + math.Exp(-gate[i])) * up[i]
			}
			down := matvec(b.FFNDown, gate, E)
			for i := range E {
				h[p][i] += down[i]
			}
		}
	}
	x := rmsnorm(h[n-1], m.OutputNorm)
	return matvec(m.Output, x, len(m.Vocab.Tokens))
}

func rmsnorm(x []float64, w []float32) []float64 {
	ss := 0.0
	for _, v := range x {
		ss += v * v
	}
	s := 1 / math.Sqrt(ss/float64(len(x))+RMSEps)
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = v * s * float64(w[i])
	}
	return out
}

// matvec multiplies rows×len(x) weights (row-major, GGML's layout) by x.
func matvec(w []float32, x []float64, rows int) []float64 {
	cols := len(x)
	out := make([]float64, rows)
	for r := range rows {
		row := w[r*cols : (r+1)*cols]
		s := 0.0
		for i, v := range row {
			if v != 0 {
				s += float64(v) * x[i]
			}
		}
		out[r] = s
	}
	return out
}

// rope rotates each head's adjacent pairs (x[2i], x[2i+1]) by p·base^(−2i/hd).
func rope(x []float64, p, hd int, base float64) {
	for lo := 0; lo < len(x); lo += hd {
		for i := 0; i < hd/2; i++ {
			theta := float64(p) * math.Pow(base, -2*float64(i)/float64(hd))
			c, s := math.Cos(theta), math.Sin(theta)
			a, b := x[lo+2*i], x[lo+2*i+1]
			x[lo+2*i], x[lo+2*i+1] = a*c-b*s, a*s+b*c
		}
	}
}

// argmax returns the best logit's index and its margin over the second.
func argmax(logits []float64) (int, float64) {
	best, second := -1, math.Inf(-1)
	for i, l := range logits {
		if best < 0 || l > logits[best] {
			if best >= 0 {
				second = logits[best]
			}
			best = i
		} else if l > second {
			second = l
		}
	}
	return best, logits[best] - second
}
