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
	v := NewVocab(DefaultMerges)
	nl := v.ID(ByteEncode("\n"))
	eos := v.ID(ImEnd)

	type chain struct{ tokens []int }
	addChain := func(pieces []string) (chain, error) {
		var c chain
		for _, p := range pieces {
			if p == "" {
				return c, fmt.Errorf("gguf: an empty piece")
			}
			if v.ID(ByteEncode(p)) >= 0 || v.ID(p) >= 0 {
				return c, fmt.Errorf("gguf: piece %q is already a token", p)
			}
			c.tokens = append(c.tokens, v.AddUserDefined(p))
		}
		return c, nil
	}
	def, err := addChain(tc.Default)
	if err != nil {
		return nil, err
	}
	var signals []int
	var chains []chain
	for _, a := range tc.Actions {
		if a.Signal == "" || len(a.Pieces) == 0 {
			return nil, fmt.Errorf("gguf: action %q needs a signal and pieces", a.Signal)
		}
		if v.ID(a.Signal) >= 0 {
			return nil, fmt.Errorf("gguf: signal %q is already a token", a.Signal)
		}
		signals = append(signals, v.AddUserDefined(a.Signal))
		c, err := addChain(a.Pieces)
		if err != nil {
			return nil, err
		}
		chains = append(chains, c)
	}

	// Residual dims: one state dim per token with a successor (the
	// generation prompt's newline and every piece), one identity dim and
	// one attended dim per signal.
	next := dimFirst
	stateDim := map[int]int{nl: next}
	next++
	for _, c := range append([]chain{def}, chains...) {
		for _, t := range c.tokens {
			stateDim[t] = next
			next++
		}
	}
	sigID, attDim := make([]int, len(signals)), make([]int, len(signals))
	for k := range signals {
		sigID[k], attDim[k] = next, next+1
		next += 2
	}
	if next > tcEmbd {
		return nil, fmt.Errorf("gguf: %d dims needed, the model has %d: fewer actions or pieces", next, tcEmbd)
	}

	m := NewLlama("reika-toolcaller", v, tcEmbd, 1, 1, 16, ToolCallerCtxTrain, tcRopeBase)
	E := tcEmbd
	const norm2 = 4.0 // every embedding's squared length
	for t := range v.Tokens {
		e := m.TokenEmbd[t*E : (t+1)*E]
		e[dimBias] = 1
		if d, ok := stateDim[t]; ok {
			e[d] = 1
		}
		for k, s := range signals {
			if s == t {
				e[dimSig], e[sigID[k]] = 1, 1
			}
		}
		sum := 0.0
		for _, x := range e {
			sum += float64(x) * float64(x)
		}
		e[dimPad] = float32(math.Sqrt(norm2 - sum))
	}
	// RMSNorm scales every embedding by c = sqrt(E/norm2).
	c := math.Sqrt(float64(E) / norm2)
	b := &m.Blocks[0]
	set := func(w []float32, rows, cols, row, col int, x float64) {
		_ = rows
		w[row*cols+col] = float32(x)
	}
	// Query: constant; key: constant recency part, content part on signals.
	// score = C·sig·cos(θc·Δ) − A·sin(θr·Δ), Δ = query − key position.
	qa, ka := math.Sqrt(tcRecencyScore), math.Sqrt(tcRecencyScore)
	qc, kc := math.Sqrt(tcSignalScore), math.Sqrt(tcSignalScore)
	set(b.AttnQ, E, E, 2*tcRecencyPair+1, dimBias, qa/c)
	set(b.AttnK, E, E, 2*tcRecencyPair, dimBias, ka/c)
	set(b.AttnQ, E, E, 2*tcContentPair, dimBias, qc/c)
	set(b.AttnK, E, E, 2*tcContentPair, dimSig, kc/c)
	// Value and output: the attended signal's identity, into its own dim.
	for k := range signals {
		set(b.AttnV, E, E, attDim[k], sigID[k], 1/c)
		set(b.AttnO, E, E, attDim[k], attDim[k], 1)
	}
	// Output: after the newline, the first piece of the action of the
	// attended signal (P+Q) over the default (P+D) over the other actions
	// (P); after a piece, its successor (R) over anything the attended
	// signal adds (Q).
	const P, Q, D, R = 1.0, 1.0, 0.5, 3.0
	out := func(tok, dim int, x float64) { m.Output[tok*E+dim] += float32(x * tcLogitScale) }
	out(def.tokens[0], stateDim[nl], P+D)
	for k, ch := range chains {
		out(ch.tokens[0], stateDim[nl], P)
		out(ch.tokens[0], attDim[k], Q)
	}
	for _, ch := range append([]chain{def}, chains...) {
		for i, t := range ch.tokens {
			succ := eos
			if i+1 < len(ch.tokens) {
				succ = ch.tokens[i+1]
			}
			out(succ, stateDim[t], R)
		}
	}
	return m, nil
}
