package gguf

import (
	"fmt"
	"math"
)

// ToolCaller is a hand-wired llama model that makes chosen tool calls
// through llama-server's real lazy tool grammar and chat parser.
//
// How it works. The model has one layer whose feed-forward part is zero, so
// the next token depends only on the current token and on what the one
// attention head reads. That head is wired to one thing: the most recent
// signal token in the context. Signals are user-defined tokens (raw text
// that llama.cpp always splits out as one token, e.g. "[[next:b]]") written
// into the prompt or into the workspace files the tests create. The head's
// query and key are constant apart from two rotary pairs: a pair that does
// not rotate within the context (its frequency is about 1e-10) adds a large
// score to every signal token, and a slowly rotating pair subtracts
// A·sin(θ·distance), so among the signals the most recent wins by a wide
// margin. The head copies that signal's identity into the residual stream.
// The output layer then reads two things: after the newline that ends the
// generation prompt ("<|im_start|>assistant\n") it picks the first token of
// the action wired to the attended signal (or of the default reply when
// the context holds none); after each token of an action it picks the next
// one, and after the last the end of turn (<|im_end|>). Every pick wins by
// tens of nats, so the server's default sampling (temperature 0.8, top-k
// 40) is deterministic in practice.
//
// What it can drive:
//   - a turn that reads several different files and then ends: the prompt
//     carries the first signal, each file ends with the signal of the next
//     read, and the last file's signal (or none) leads to a text answer.
//     Shed summaries, recaps, notes and notices may come after the newest
//     result: the head looks for the newest signal, not a position;
//   - text replies, tool calls split into as many tokens as wanted (one
//     token per call keeps a call whole under any max_tokens; several let
//     max_tokens cut it mid-arguments), and the default reply, which is also
//     what it answers when tool calls are forbidden (the note round);
//   - the same choice on every run, on every slot and after any prefix
//     cache reuse.
//
// What it cannot drive: anything that depends on understanding text. It
// never reads a tool result except for signals, so a workspace must be
// built for it; it cannot fill arguments it was not wired with, reason,
// edit, or vary a reply within a round. Its scores need the K cache in F32
// (llama-server -ctk f32) and no flash attention (-fa off): F16 rounding of
// keys of this size would blur the recency margin. Its training context is
// ToolCallerCtxTrain tokens; beyond that the recency pair wraps. Its 128
// dims hold about 40 one-piece actions (each signal takes two, each piece
// one); Model says when they do not fit.
//
// Measured on llama-server 0.7.0 (build 11669): its tool calls come back
// parsed, streamed with the arguments in the first delta; max_tokens cuts a
// multi-piece call inside its arguments (finish_reason "length", the call
// kept); a call the grammar cannot accept ("<tool_call>\nnot json") is the
// server's HTTP 500 "got exception: Unexpected empty grammar stack after
// accepting piece"; with tool_choice "none" a call comes back as content.
type ToolCaller struct {
	// Default is the reply, token by token, when the context holds no
	// signal. At least one piece.
	Default []string
	// Actions map signals to replies.
	Actions []Action
}

// Action is the reply wired to one signal.
type Action struct {
	// Signal is the raw text of the signal token.
	Signal string
	// Pieces is the reply, one token per piece, followed by <|im_end|>.
	// Pieces must be unique across the model.
	Pieces []string
}

// CallText is the text of a Hermes-style tool call, as the chat template
// renders one: args is the JSON object of the arguments.
func CallText(name, args string) string {
	return "<tool_call>\n{\"name\": \"" + name + "\", \"arguments\": " + args + "}\n</tool_call>"
}

// ToolCallerCtxTrain is the hand-wired model's training context.
const ToolCallerCtxTrain = 32768

// Wiring of the hand-wired model.
const (
	tcEmbd     = 128
	tcRopeBase = 1e10
	// tcRecencyPair rotates by θ = base^(−28/64) ≈ 4.2e-5 a token, less
	// than a quarter turn over the training context; tcContentPair by
	// ≈ 1.4e-10.
	tcRecencyPair = 28
	tcContentPair = 63
	// Pre-scale attention scores: signal bonus and recency slope (a signal
	// 100 tokens newer than another wins by ≥ 70 nats anywhere in the
	// context, by hundreds near its end).
	tcSignalScore  = 2.5e6
	tcRecencyScore = 1e6
	// Output weights (before RMSNorm's scale of about 5).
	tcLogitScale = 20.0
)

// Dims of the residual stream.
const (
	dimBias  = 0 // 1 for every token
	dimPad   = 1 // makes every embedding the same length
	dimSig   = 2 // 1 for signal tokens
	dimFirst = 3 // the state and signal dims start here
)

// Model builds the model: the shared vocabulary plus the signal tokens and
// the pieces, both as user-defined tokens. llama.cpp splits a user-defined
// token's text out of any input, so a reply the template renders back into
// the history tokenizes as the model generated it and the slot reuses it,
// as it would a real model's reply. Pieces must therefore be distinctive
// text: a piece that occurs inside the template's own words (a newline,
// "assistant") would change how every prompt tokenizes.
func (tc ToolCaller) Model() (*Llama, error) {
	if len(tc.Default) == 0 {
		return nil, fmt.Errorf("gguf: the tool caller needs a default reply")
	}
	w, err := tc.tokens()
	if err != nil {
		return nil, err
	}
	if err := w.layout(); err != nil {
		return nil, err
	}
	m := NewLlama("reika-toolcaller", w.v, tcEmbd, 1, 1, 16, ToolCallerCtxTrain, tcRopeBase)
	w.embed(m)
	w.attend(m)
	w.output(m)
	return m, nil
}

// tcWiring is how a tool caller's tokens map onto the residual stream.
type tcWiring struct {
	v       *Vocab
	nl, eos int     // the generation prompt's newline and the end of turn
	def     []int   // the default reply's tokens
	signals []int   // per action, its signal token
	chains  [][]int // per action, its reply's tokens

	// Set by layout.
	stateDim      map[int]int // per token with a successor, its state dim
	sigID, attDim []int       // per action, its signal's identity dim and attended dim
}

// tokens builds the vocabulary: the shared one, then the default reply's
// pieces, then for each action its signal and its pieces, all user-defined
// tokens in that order. It fails on an action without a signal or pieces,
// on an empty piece, and on a signal or piece that is already a token.
func (tc ToolCaller) tokens() (*tcWiring, error) {
	v := NewVocab(DefaultMerges)
	w := &tcWiring{v: v, nl: v.ID(ByteEncode("\n")), eos: v.ID(ImEnd)}
	var err error
	if w.def, err = addPieces(v, tc.Default); err != nil {
		return nil, err
	}
	for _, a := range tc.Actions {
		if a.Signal == "" || len(a.Pieces) == 0 {
			return nil, fmt.Errorf("gguf: action %q needs a signal and pieces", a.Signal)
		}
		if v.ID(a.Signal) >= 0 {
			return nil, fmt.Errorf("gguf: signal %q is already a token", a.Signal)
		}
		w.signals = append(w.signals, v.AddUserDefined(a.Signal))
		c, err := addPieces(v, a.Pieces)
		if err != nil {
			return nil, err
		}
		w.chains = append(w.chains, c)
	}
	return w, nil
}

// addPieces adds each piece to v as a user-defined token and returns their
// ids; a piece must be new and not empty.
func addPieces(v *Vocab, pieces []string) ([]int, error) {
	var ids []int
	for _, p := range pieces {
		if p == "" {
			return ids, fmt.Errorf("gguf: an empty piece")
		}
		if v.ID(ByteEncode(p)) >= 0 || v.ID(p) >= 0 {
			return ids, fmt.Errorf("gguf: piece %q is already a token", p)
		}
		ids = append(ids, v.AddUserDefined(p))
	}
	return ids, nil
}

// replies is the default reply's chain followed by the actions' chains.
func (w *tcWiring) replies() [][]int { return append([][]int{w.def}, w.chains...) }

// layout assigns the residual dims from dimFirst on: one state dim per
// token with a successor (the generation prompt's newline, then every
// piece, the default reply's first), then an identity dim and an attended
// dim per signal. It fails when they do not fit in tcEmbd.
func (w *tcWiring) layout() error {
	next := dimFirst
	w.stateDim = map[int]int{w.nl: next}
	next++
	for _, c := range w.replies() {
		for _, t := range c {
			w.stateDim[t] = next
			next++
		}
	}
	w.sigID, w.attDim = make([]int, len(w.signals)), make([]int, len(w.signals))
	for k := range w.signals {
		w.sigID[k], w.attDim[k] = next, next+1
		next += 2
	}
	if next > tcEmbd {
		return fmt.Errorf("gguf: %d dims needed, the model has %d: fewer actions or pieces", next, tcEmbd)
	}
	return nil
}

// tcNorm2 is every embedding's squared length, so RMSNorm scales every
// embedding by the same tcNormScale.
const tcNorm2 = 4.0

// tcNormScale is RMSNorm's scale of every embedding, sqrt(tcEmbd/tcNorm2).
func tcNormScale() float64 { return math.Sqrt(float64(tcEmbd) / tcNorm2) }

// embed writes the token embeddings: the bias dim, the token's state dim,
// for a signal the signal dim and its identity dim, and the pad dim that
// brings the squared length to tcNorm2.
func (w *tcWiring) embed(m *Llama) {
	E := m.Embd
	for t := range w.v.Tokens {
		e := m.TokenEmbd[t*E : (t+1)*E]
		e[dimBias] = 1
		if d, ok := w.stateDim[t]; ok {
			e[d] = 1
		}
		for k, s := range w.signals {
			if s == t {
				e[dimSig], e[w.sigID[k]] = 1, 1
			}
		}
		sum := 0.0
		for _, x := range e {
			sum += float64(x) * float64(x)
		}
		e[dimPad] = float32(math.Sqrt(tcNorm2 - sum))
	}
}

// attend wires the one head. Query: constant; key: a constant recency part
// and a content part on signals, so score = C·sig·cos(θc·Δ) − A·sin(θr·Δ),
// Δ = query − key position. Value and output copy the attended signal's
// identity into its attended dim.
func (w *tcWiring) attend(m *Llama) {
	E, c := m.Embd, tcNormScale()
	b := &m.Blocks[0]
	set := func(mat []float32, row, col int, x float64) { mat[row*E+col] = float32(x) }
	qa, ka := math.Sqrt(tcRecencyScore), math.Sqrt(tcRecencyScore)
	qc, kc := math.Sqrt(tcSignalScore), math.Sqrt(tcSignalScore)
	set(b.AttnQ, 2*tcRecencyPair+1, dimBias, qa/c)
	set(b.AttnK, 2*tcRecencyPair, dimBias, ka/c)
	set(b.AttnQ, 2*tcContentPair, dimBias, qc/c)
	set(b.AttnK, 2*tcContentPair, dimSig, kc/c)
	for k := range w.signals {
		set(b.AttnV, w.attDim[k], w.sigID[k], 1/c)
		set(b.AttnO, w.attDim[k], w.attDim[k], 1)
	}
}

// output wires the output layer: after the newline, the first piece of the
// action of the attended signal (P+Q) over the default (P+D) over the other
// actions (P); after a piece, its successor, or the end of turn after a
// reply's last, (R) over anything the attended signal adds (Q).
func (w *tcWiring) output(m *Llama) {
	E := m.Embd
	const P, Q, D, R = 1.0, 1.0, 0.5, 3.0
	out := func(tok, dim int, x float64) { m.Output[tok*E+dim] += float32(x * tcLogitScale) }
	out(w.def[0], w.stateDim[w.nl], P+D)
	for k, ch := range w.chains {
		out(ch[0], w.stateDim[w.nl], P)
		out(ch[0], w.attDim[k], Q)
	}
	for _, ch := range w.replies() {
		for i, t := range ch {
			succ := w.eos
			if i+1 < len(ch) {
				succ = ch[i+1]
			}
			out(succ, w.stateDim[t], R)
		}
	}
}
