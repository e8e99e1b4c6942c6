package gguf

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/reika-lsp/reika-lsp/internal/goroot"
)

// Token types of tokenizer.ggml.token_type.
const (
	TokenNormal      = 1
	TokenControl     = 3
	TokenUserDefined = 4
)

// The chat markers.
const (
	ImStart = "<|im_start|>"
	ImEnd   = "<|im_end|>"
)

// Vocab is a byte-level BPE vocabulary in llama.cpp's "gpt2" tokenizer
// model. Normal tokens are stored in the GPT-2 byte mapping (a space is
// "Ġ", a newline "Ċ"); control and user-defined tokens are raw text.
type Vocab struct {
	Tokens []string
	Types  []int32
	Merges []string
	ids    map[string]int
}

// ID returns the id of a token by its stored text; -1 when absent.
func (v *Vocab) ID(stored string) int {
	if id, ok := v.ids[stored]; ok {
		return id
	}
	return -1
}

// add appends a token and returns its id. It panics on a duplicate: two
// tokens with one text would make the vocabulary ambiguous.
func (v *Vocab) add(stored string, typ int32) int {
	if v.ids == nil {
		v.ids = map[string]int{}
	}
	if _, dup := v.ids[stored]; dup {
		panic(fmt.Sprintf("gguf: duplicate token %q", stored))
	}
	v.ids[stored] = len(v.Tokens)
	v.Tokens = append(v.Tokens, stored)
	v.Types = append(v.Types, typ)
	return len(v.Tokens) - 1
}

// AddText adds a normal token for raw text (stored in the byte mapping)
// and returns its id. The merges never produce it, so only the model can
// emit it; it detokenizes to text.
func (v *Vocab) AddText(text string) int { return v.add(ByteEncode(text), TokenNormal) }

// AddUserDefined adds a user-defined token: llama.cpp splits its raw text
// out of any input before BPE, so it is always one token.
func (v *Vocab) AddUserDefined(text string) int { return v.add(text, TokenUserDefined) }

// byteToRune is GPT-2's byte-to-unicode table: printable bytes map to
// themselves, the others to code points from U+0100 on.
var byteToRune = func() [256]rune {
	var t [256]rune
	n := 0
	for b := 0; b < 256; b++ {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF {
			t[b] = rune(b)
		} else {
			t[b] = rune(256 + n)
			n++
		}
	}
	return t
}()

// ByteEncode maps raw bytes to their GPT-2 byte-mapped text.
func ByteEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteRune(byteToRune[s[i]])
	}
	return b.String()
}

//go:embed *.go
var corpus embed.FS

// DefaultMerges is how many merges NewVocab learns.
const DefaultMerges = 3000

// NewVocab builds the shared vocabulary: the 256 byte tokens, merges
// learned from Go source and prose (this package's own files and the Go
// specification of the toolchain, so the vocabulary is the same on every
// machine with the same Go), and the ChatML control tokens. Callers add
// their own tokens after it.
func NewVocab(merges int) *Vocab {
	v := &Vocab{}
	for b := 0; b < 256; b++ {
		v.add(string(byteToRune[b]), TokenNormal)
	}
	for _, m := range learnedMerges(merges) {
		merged := m[0] + m[1]
		if v.ID(merged) >= 0 {
			continue
		}
		v.add(merged, TokenNormal)
		v.Merges = append(v.Merges, m[0]+" "+m[1])
	}
	v.add("<|endoftext|>", TokenControl)
	v.add(ImStart, TokenControl)
	v.add(ImEnd, TokenControl)
	return v
}

var (
	mergesMu    sync.Mutex
	mergesCache = map[int][][2]string{}
)

// learnedMerges learns n merges once per process.
func learnedMerges(n int) [][2]string {
	mergesMu.Lock()
	defer mergesMu.Unlock()
	if m, ok := mergesCache[n]; ok {
		return m
	}
	var text strings.Builder
	files, _ := fs.Glob(corpus, "*.go")
	sort.Strings(files)
	for _, f := range files {
		b, _ := corpus.ReadFile(f)
		text.Write(b)
	}
	if dir := goroot.Dir(); dir != "" {
		if b, err := os.ReadFile(filepath.Join(dir, "doc", "go_spec.html")); err == nil {
			text.Write(b)
		}
	}
	m := learnMerges(text.String(), n)
	mergesCache[n] = m
	return m
}

// preTokenize splits text roughly as llama.cpp's qwen2 pre-tokenizer does:
// letters with at most one leading non-letter, single digits, punctuation
// runs with an optional leading space, and whitespace. Merges never cross
// the pieces.
func preTokenize(s string) []string {
	var out []string
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		end := n
		switch {
		case unicode.IsLetter(r):
			end = runEnd(s, n, unicode.IsLetter)
		case !unicode.IsSpace(r) && !unicode.IsDigit(r) && n < len(s) && isLetterAt(s, n):
			end = runEnd(s, n, unicode.IsLetter)
		case unicode.IsDigit(r):
		case unicode.IsSpace(r) && r != '\n' && n < len(s) && isPunctAt(s, n):
			end = runEnd(s, n, isPunct)
		case unicode.IsSpace(r):
			end = runEnd(s, n, unicode.IsSpace)
		default:
			end = runEnd(s, n, isPunct)
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

func isPunct(r rune) bool { return !unicode.IsSpace(r) && !unicode.IsLetter(r) && !unicode.IsDigit(r) }

func isLetterAt(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsLetter(r)
}

func isPunctAt(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return isPunct(r)
}

func runEnd(s string, i int, in func(rune) bool) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !in(r) {
			break
		}
		i += n
	}
	return i
}

// learnMerges learns up to n BPE merges from text: repeatedly the most
// frequent adjacent pair of symbols within the pre-tokenized pieces, ties
// broken by the pair's text, so the result is deterministic. Pair counts
// are kept up to date word by word, so a merge costs a pass over the words
// and one over the pairs.
func learnMerges(text string, n int) [][2]string {
	words, pairs := bpeWords(text)
	var out [][2]string
	for len(out) < n {
		best, ok := bestPair(pairs)
		if !ok {
			break
		}
		out = append(out, best)
		for wi := range words {
			words[wi].merge(best, pairs)
		}
		for p, c := range pairs {
			if c <= 0 {
				delete(pairs, p)
			}
		}
	}
	return out
}

// bpeWord is a distinct pre-tokenized piece as symbols, and how often it
// occurs.
type bpeWord struct {
	syms  []string
	count int
}

// bpeWords splits text's pre-tokenized pieces into byte symbols, each
// distinct piece once in sorted order, and counts their adjacent pairs.
func bpeWords(text string) ([]bpeWord, map[[2]string]int) {
	counts := map[string]int{}
	for _, p := range preTokenize(text) {
		counts[p]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	words := make([]bpeWord, 0, len(keys))
	pairs := map[[2]string]int{}
	for _, k := range keys {
		var syms []string
		for i := 0; i < len(k); i++ {
			syms = append(syms, string(byteToRune[k[i]]))
		}
		words = append(words, bpeWord{syms, counts[k]})
		for i := 0; i+1 < len(syms); i++ {
			pairs[[2]string{syms[i], syms[i+1]}] += counts[k]
		}
	}
	return words, pairs
}

// bestPair is the most frequent pair, ties broken by the pair's text; ok
// is false when none is seen more than once (not worth a merge).
func bestPair(pairs map[[2]string]int) (best [2]string, ok bool) {
	bestN := 1
	for p, c := range pairs {
		if c > bestN || c == bestN && bestN > 1 && (p[0] < best[0] || p[0] == best[0] && p[1] < best[1]) {
			best, bestN = p, c
		}
	}
	return best, bestN > 1
}

// merge joins every occurrence of pair in w into one symbol, keeping the
// pair counts up to date.
func (w *bpeWord) merge(pair [2]string, pairs map[[2]string]int) {
	has := false
	for i := 0; i+1 < len(w.syms); i++ {
		if w.syms[i] == pair[0] && w.syms[i+1] == pair[1] {
			has = true
			break
		}
	}
	if !has {
		return
	}
	for i := 0; i+1 < len(w.syms); i++ {
		pairs[[2]string{w.syms[i], w.syms[i+1]}] -= w.count
	}
	merged := pair[0] + pair[1]
	for i := 0; i+1 < len(w.syms); i++ {
		if w.syms[i] == pair[0] && w.syms[i+1] == pair[1] {
			w.syms = slices.Replace(w.syms, i, i+2, merged)
		}
	}
	for i := 0; i+1 < len(w.syms); i++ {
		pairs[[2]string{w.syms[i], w.syms[i+1]}] += w.count
	}
}
