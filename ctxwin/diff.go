package ctxwin

// Divergence is how a request relates to the one before it, for the
// prefix-cache debug line (DESIGN.md §3.11).
type Divergence struct {
	// Append is true when the request starts with every message of the
	// previous one, byte for byte.
	Append bool
	// Index is the first message that differs (when not an append).
	Index int
}

// Diverge compares a request with the previous one.
func Diverge(prev, next []Message) Divergence {
	n := min(len(prev), len(next))
	for i := 0; i < n; i++ {
		if !prev[i].Equal(next[i]) {
			return Divergence{Index: i}
		}
	}
	if len(next) < len(prev) {
		return Divergence{Index: n}
	}
	return Divergence{Append: true, Index: len(prev)}
}
