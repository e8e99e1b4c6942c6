// Package ctxwin decides what the model sees: it divides the context window
// into budgets, counts request sizes with the engine's tokenizer where it can
// (an estimate for the rest, count.go), keeps requests append-only below the
// shed point, and when the window fills it cuts, sheds and folds. A shrink
// event is shaped for the engine's cache (event.go): deletions of spans plus
// one message appended after the newest round, so an engine with chunk reuse
// processes only that message and one that reuses a prefix processes what
// follows the first deletion. A shrink is a pipeline of named steps in the
// seed's words, cut, note, shed, fold, recap and message, with the
// chunk-reuse shaping a stage of its own (pipeline.go); each step is in the
// file that bears its name (sheddable.go, shed.go, fold.go, recap.go;
// layout.go writes the message, runs.go shapes the runs). It is pure: it
// imports only the standard library, and what it
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
// quarter of the window. Pinned (REIKA_MIN_GEN_TOKENS) fixes it instead,
// as given (the seed's 24k window with 6144 pinned sheds at 16.1k), up to
// half the window, so the usable window is never smaller than the reserve.
// The zero value is ready to use.
type Reserve struct {
	Pinned  int `json:"pinned,omitempty"`
	Largest int `json:"largest,omitempty"`
}

// Observe records one completion's size in tokens.
func (r *Reserve) Observe(completionTokens int) {
	r.Largest = max(r.Largest, completionTokens)
}

// Tokens is the reserve for a window: the pinned value, up to half the
// window, else the learned one, up to a quarter of it.
func (r Reserve) Tokens(window int) int {
	switch {
	case r.Pinned > 0 && window > 0:
		return min(r.Pinned, window/2)
	case r.Pinned > 0:
		return r.Pinned
	case window > 0:
		return min(max(DefaultReserve, r.Largest), window/4)
	}
	return max(DefaultReserve, r.Largest)
}

// Capped reports whether the pinned reserve is more than a window of
// window tokens takes (half of it).
func (r Reserve) Capped(window int) bool { return r.Pinned > 0 && window > 0 && r.Pinned > window/2 }

// MinAnswerTokens is the least answer room on any window (AnswerFloor).
const MinAnswerTokens = 256

// AnswerFloor is the least max_tokens a request goes out with, on a window
// of window tokens that holds reserve back for the reply (issue 27: below
// it a model is cut off mid-word, max_tokens 103, 6, 1 on a 4096 window).
// 256 tokens hold a short answer or one tool call with a few lines of
// arguments (a read, a command, an edit of a handful of lines): the least
// reply that moves a turn on. Larger windows serve larger models, which
// reason before they answer and write longer edits, so the floor grows
// with the window, a sixteenth of it (512 at 8k), up to 1024 from 16k on.
// It never exceeds what a request filling the usable window leaves
// (reserve − ReplyMargin): a request the shed cycle keeps within the
// usable window always clears it, and the floor refuses only what no
// shrink can make fit.
func AnswerFloor(window, reserve int) int {
	return max(min(window/16, 1024, reserve-ReplyMargin), MinAnswerTokens)
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
