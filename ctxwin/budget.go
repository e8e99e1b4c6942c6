// Package ctxwin decides what the model sees: it divides the context window
// into budgets, counts request sizes with the engine's tokenizer where it can
// (an estimate for the rest, count.go), keeps requests append-only below the
// shed point, and when the window fills it cuts, sheds and folds. A shrink
// event is shaped for the engine's cache (event.go): deletions of spans plus
// one message appended after the newest round, so an engine with chunk reuse
// processes only that message and one that reuses a prefix processes what
// follows the first deletion. The policy runs in named steps, each in the
// file that bears its name: which results can be shed (sheddable.go), shed
// down to the target (shed.go), decide the fold (fold.go), lay out the event
// (layout.go). It is pure: it imports only the standard library, and what it
// needs from outside (a file's outline, the engine's counts) is passed in.
//
// The rules are those of the seed, made precise in
// docs/design.md §3. The names follow the seed: ShedPoint, ShedTarget, FoldKeeps,
// Recap, Chip.
package ctxwin

import "fmt"

// Budget constants (docs/design.md §3.2).
const (
	// DefaultReserve is the generation reserve before the model has
	// generated anything.
	DefaultReserve = 2048
	// ReplyMargin is what max_tokens leaves free below the window.
	ReplyMargin = 384
	// RepoMapMin and RepoMapMax clamp the repo map, in characters.
	RepoMapMin = 3200
	RepoMapMax = 12000
)

// Budget is the division of one window, in tokens (RepoMapChars in
// characters). All fractions floor, computed in integers so the seed's
// table comes out exactly.
type Budget struct {
	Window       int `json:"window"`
	Reserve      int `json:"reserve"`
	Usable       int `json:"usable"`     // U = W − G
	ShedPoint    int `json:"shedPoint"`  // S = 0.9·U
	ShedTarget   int `json:"shedTarget"` // T = 0.63·U (= 0.7·S)
	FoldKeeps    int `json:"foldKeeps"`  // K = 0.3·U, recent rounds kept verbatim by a fold
	Recap        int `json:"recap"`      // R = 0.1·U, the recap of everything older
	RepoMapChars int `json:"repoMapChars"`
}

// NewBudget divides a window of window tokens with a generation reserve of
// reserve tokens. It panics if reserve is not below window: callers
// validate input (Validate) first.
func NewBudget(window, reserve int) Budget {
	if err := Validate(window, reserve); err != nil {
		panic(err)
	}
	u := window - reserve
	return Budget{
		Window:       window,
		Reserve:      reserve,
		Usable:       u,
		ShedPoint:    u * 9 / 10,
		ShedTarget:   u * 63 / 100,
		FoldKeeps:    u * 3 / 10,
		Recap:        u / 10,
		RepoMapChars: RepoMapChars(window),
	}
}

// Validate reports whether a window and reserve can be divided.
func Validate(window, reserve int) error {
	switch {
	case window <= 0:
		return fmt.Errorf("window must be a positive number of tokens, got %d", window)
	case reserve < 0:
		return fmt.Errorf("reserve must not be negative, got %d", reserve)
	case reserve >= window:
		return fmt.Errorf("reserve (%d) must be smaller than the window (%d)", reserve, window)
	}
	return nil
}

// RepoMapChars is the repo map's share of a window: 5% of the window in
// tokens, at four characters a token, clamped to 3200–12000 characters.
// A window of 0 (unknown) gets the minimum.
func RepoMapChars(window int) int {
	m := window * 5 / 100 * 4
	return min(max(m, RepoMapMin), RepoMapMax)
}

// Reserve is the generation reserve G: it starts at DefaultReserve, rises to
// the largest completion seen (reasoning included), and never exceeds a
// quarter of the window. Pinned (REIKA_MIN_GEN_TOKENS) fixes it instead.
// The zero value is ready to use.
type Reserve struct {
	Pinned  int `json:"pinned,omitempty"`
	Largest int `json:"largest,omitempty"`
}

// Observe records one completion's size in tokens.
func (r *Reserve) Observe(completionTokens int) {
	r.Largest = max(r.Largest, completionTokens)
}

// Tokens is the reserve for a window: the pinned value, else the learned
// one, never above a quarter of the window.
func (r Reserve) Tokens(window int) int {
	g := max(DefaultReserve, r.Largest)
	if r.Pinned > 0 {
		g = r.Pinned
	}
	if window > 0 {
		g = min(g, window/4)
	}
	return g
}

// MaxTokens is the max_tokens of a request of prompt tokens: what the window
// leaves free minus ReplyMargin, held under the model's output limit and the
// user's REIKA_MAX_TOKENS (either 0 when unset). With no known window it is
// the user's setting, or 0 to leave it to the server. The result is at least
// 1 when a window is known, so a request never asks for a negative count.
func MaxTokens(window, prompt, outputLimit, setting int) int {
	if window <= 0 {
		return setting
	}
	n := window - prompt - ReplyMargin
	if outputLimit > 0 {
		n = min(n, outputLimit)
	}
	if setting > 0 {
		n = min(n, setting)
	}
	return max(n, 1)
}
