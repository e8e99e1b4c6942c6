package enginetest

import (
	"math"
	"strings"
	"unicode/utf8"
)

// tokenizer is the fake engine's deterministic tokenizer. It is not any real
// model's vocabulary, but it behaves like one where context management can
// tell the difference:
//
//   - it is local: every chat-template marker (<|im_start|>, <|im_end|>) is
//     a token of its own and starts afresh, so a message tokenizes the same
//     wherever it sits, and a request that appends to the previous one
//     shares its token prefix;
//   - its density is set by CharsPerToken: words (with their leading space,
//     as BPE vocabularies have them) cost about len/CharsPerToken tokens, so
//     prose comes out at about CharsPerToken characters per token;
//   - punctuation, operators and indentation cost about two and a half times
//     as much per character as letters, digits a token per three, and every
//     non-ASCII rune a token, so code, JSON and CJK text tokenize denser
//     than prose;
//   - whitespace up to and with a line break is a token of its own (the
//     indentation after it another), so a text cut at a line end
//     tokenizes as its prefix: what follows the break starts afresh
//     whatever came before it.
//
// Text is cut into pieces (a word, a run of digits, of punctuation, of
// whitespace, a marker, a non-ASCII rune), each with a fractional cost. A
// piece that costs a token or more is split into round(cost) tokens; cheaper
// pieces are packed together until their costs add up to a token, carrying
// the remainder. A token is the 32-bit FNV-1a hash of its bytes.
type tokenizer struct {
	word  float64 // characters per token in a word
	punct float64 // characters per token in a run of punctuation
	space float64 // characters per token in a run of whitespace
}

// newTokenizer returns a tokenizer whose prose density is about cpt
// characters per token.
func newTokenizer(cpt float64) *tokenizer {
	if cpt <= 0 || math.IsNaN(cpt) || math.IsInf(cpt, 0) {
		cpt = DefaultCharsPerToken
	}
	return &tokenizer{word: cpt * wordFactor, punct: cpt * punctFactor, space: cpt * spaceFactor}
}

// Calibration of the tokenizer (see TestTokenizerDensity).
const (
	wordFactor  = 1.05
	punctFactor = 0.4
	spaceFactor = 0.8
	digitWidth  = 3.0
)

// Tokens appends the tokens of s to dst.
func (t *tokenizer) Tokens(dst []uint32, s string) []uint32 {
	t.scan(s, func(start, end int) {
		dst = append(dst, hash(s[start:end]))
	})
	return dst
}

// Count is the number of tokens of s.
func (t *tokenizer) Count(s string) int {
	n := 0
	t.scan(s, func(int, int) { n++ })
	return n
}

// Prefix returns the longest prefix of s, cut at one of its token
// boundaries, that holds at most n tokens when tokenized on its own.
func (t *tokenizer) Prefix(s string, n int) string {
	if n <= 0 {
		return ""
	}
	var ends []int
	t.scan(s, func(_, end int) { ends = append(ends, end) })
	if len(ends) <= n {
		return s
	}
	// The tokens of a prefix may differ from the first tokens of s where
	// the cut splits a piece; step back until the prefix fits.
	for k := n - 1; k >= 0; k-- {
		if p := s[:ends[k]]; t.Count(p) <= n {
			return p
		}
	}
	return ""
}

// scan calls emit with the byte range of every token of s, in order.
func (t *tokenizer) scan(s string, emit func(start, end int)) {
	pending := -1 // start of the pending packed token, or -1
	acc := 0.0    // cost of the pending token
	flush := func(end int) {
		if pending >= 0 && end > pending {
			emit(pending, end)
		}
		pending = -1
	}
	i := 0
	for i < len(s) {
		j, cost, alone := t.piece(s, i)
		switch {
		case alone:
			flush(i)
			acc = 0
			emit(i, j)
		case cost >= 1:
			flush(i)
			acc = 0
			split(i, j, int(math.Round(cost)), emit)
		default:
			if pending < 0 {
				pending = i
			}
			acc += cost
			if acc >= 1 || s[j-1] == '\n' {
				// A line break ends a token, as BPE pre-tokenizers split
				// there: what follows a newline tokenizes the same whatever
				// came before it (a prompt that ends in "assistant\n" and
				// the reply generated after it).
				flush(j)
				acc = max(acc-1, 0)
			}
		}
		i = j
	}
	flush(len(s))
}

// piece returns the end of the piece that starts at i, its cost in tokens,
// and whether it is a token on its own (a marker, a non-ASCII rune).
func (t *tokenizer) piece(s string, i int) (end int, cost float64, alone bool) {
	c := s[i]
	switch {
	case c == '<' && markerLen(s[i:]) > 0:
		return i + markerLen(s[i:]), 1, true
	case c == ' ' && i+1 < len(s) && isWordByte(s[i+1]):
		j := wordEnd(s, i+1) // " word": the space belongs to the word
		return j, float64(j-i) / t.word, false
	case isSpace(c):
		j := i
		for j < len(s) && isSpace(s[j]) {
			j++
		}
		// A single space before a word is left to the word.
		if j-i > 1 && j < len(s) && s[j-1] == ' ' && isWordByte(s[j]) {
			j--
		}
		// The run up to its last line break is a token of its own, as
		// llama.cpp's pre-tokenizers split one out (measured on
		// llama-server 0.7.0's /tokenize: "\n\n" one piece, "\n" then "\t"
		// or "   " apart): what comes before a line break and after it
		// tokenizes the same whatever is on the other side of it (a result
		// cut to its first line, a reply whose reasoning is dropped).
		if k := strings.LastIndexByte(s[i:j], '\n'); k >= 0 {
			return i + k + 1, 1, true
		}
		return j, float64(j-i) / t.space, false
	case isDigit(c):
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		return j, float64(j-i) / digitWidth, false
	case isWordByte(c):
		j := wordEnd(s, i)
		return j, float64(j-i) / t.word, false
	case c >= utf8.RuneSelf:
		_, n := utf8.DecodeRuneInString(s[i:])
		return i + n, 1, true
	}
	j := i + 1
	for j < len(s) && isPunct(s[j]) && !(s[j] == '<' && markerLen(s[j:]) > 0) {
		j++
	}
	return j, float64(j-i) / t.punct, false
}

// split emits s[i:j] as k tokens (at least one) of about equal length.
func split(i, j, k int, emit func(int, int)) {
	n := j - i
	k = max(1, min(k, n))
	start := i
	for m := 1; m <= k; m++ {
		end := i + n*m/k
		emit(start, end)
		start = end
	}
}

// markerLen is the length of a chat-template marker <|name|> at the start of
// s, or 0.
func markerLen(s string) int {
	if len(s) < 5 || s[0] != '<' || s[1] != '|' {
		return 0
	}
	for k := 2; k < len(s) && k < 40; k++ {
		c := s[k]
		if c == '|' {
			if k+1 < len(s) && s[k+1] == '>' && k > 2 {
				return k + 2
			}
			return 0
		}
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDigit(c)) {
			return 0
		}
	}
	return 0
}

func wordEnd(s string, i int) int {
	for i < len(s) && isWordByte(s[i]) {
		i++
	}
	return i
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isPunct(c byte) bool {
	return c < utf8.RuneSelf && !isWordByte(c) && !isDigit(c) && !isSpace(c)
}

// hash is 32-bit FNV-1a.
func hash(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b []uint32) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
