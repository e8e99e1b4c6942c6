package enginetest

import "math"

// generationPrompt ends every prompt the fake's template renders.
const generationPrompt = markStart + "assistant\n"

// codeSample is Go source in the usual mix of doc comments, declarations
// and statements, on which Options.CodeCharsPerToken is calibrated.
const codeSample = `// Package ring implements a fixed-size ring buffer of byte slices.
//
// A Ring keeps the newest entries: once it is full, each Push drops the
// oldest one. It is not safe for concurrent use.
package ring

import (
	"errors"
	"fmt"
	"strings"
)

// ErrEmpty is returned by Pop when the ring holds nothing.
var ErrEmpty = errors.New("ring: empty")

// Ring is a ring buffer of at most Cap entries.
type Ring struct {
	buf   [][]byte
	head  int // index of the oldest entry
	count int // entries in use
	// dropped counts the entries Push discarded to make room.
	dropped int
}

// New returns a ring of capacity n. It panics if n is not positive.
func New(n int) *Ring {
	if n <= 0 {
		panic(fmt.Sprintf("ring: capacity %d must be positive", n))
	}
	return &Ring{buf: make([][]byte, n)}
}

// Len is the number of entries held.
func (r *Ring) Len() int { return r.count }

// Push adds p as the newest entry, dropping the oldest when the ring is full.
func (r *Ring) Push(p []byte) {
	if r.count == len(r.buf) {
		r.buf[r.head] = nil
		r.head = (r.head + 1) % len(r.buf)
		r.count--
		r.dropped++
	}
	i := (r.head + r.count) % len(r.buf)
	r.buf[i] = append([]byte(nil), p...)
	r.count++
}

// Pop removes and returns the oldest entry.
func (r *Ring) Pop() ([]byte, error) {
	if r.count == 0 {
		return nil, ErrEmpty
	}
	p := r.buf[r.head]
	r.buf[r.head] = nil
	r.head = (r.head + 1) % len(r.buf)
	r.count--
	return p, nil
}

// Do calls f for each entry, oldest first, and stops early when f returns
// false.
func (r *Ring) Do(f func(p []byte) bool) {
	for k := 0; k < r.count; k++ {
		if !f(r.buf[(r.head+k)%len(r.buf)]) {
			return
		}
	}
}

// String lists the entries, quoted, for debugging.
func (r *Ring) String() string {
	var b strings.Builder
	b.WriteString("ring[")
	r.Do(func(p []byte) bool {
		if b.Len() > len("ring[") {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", p)
		return true
	})
	fmt.Fprintf(&b, "] (%d/%d, %d dropped)", r.count, len(r.buf), r.dropped)
	return b.String()
}
`

// proseForCode is the prose density (Options.CharsPerToken) at which the
// tokenizer reads codeSample at about code characters per token.
func proseForCode(code float64) float64 {
	if code <= 0 || math.IsNaN(code) || math.IsInf(code, 0) {
		return DefaultCharsPerToken
	}
	density := func(cpt float64) float64 {
		return float64(len(codeSample)) / float64(max(newTokenizer(cpt).Count(codeSample), 1))
	}
	// Density grows with cpt (in steps, where pieces round to whole
	// tokens): bisect for the smallest cpt that reaches code.
	lo, hi := 0.25, 64.0
	for range 50 {
		mid := (lo + hi) / 2
		if density(mid) < code {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}
