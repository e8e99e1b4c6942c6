package ctxwin

import (
	"testing"

	"github.com/reika-lsp/reika-lsp/internal/deptest"
)

// The seed's table, exactly (docs/design.md §3.2).
func TestBudgetSeedTable(t *testing.T) {
	tests := []struct {
		window, reserve                   int
		shed, target, keeps, recap, chars int
	}{
		{16000, 2048, 12556, 8789, 4185, 1395, 3200},
		{24000, 2048, 19756, 13829, 6585, 2195, 4800},
		{24000, 6144, 16070, 11249, 5356, 1785, 4800},
		{32000, 2048, 26956, 18869, 8985, 2995, 6400},
		{128000, 2048, 113356, 79349, 37785, 12595, 12000},
	}
	for _, tt := range tests {
		b := NewBudget(tt.window, tt.reserve)
		got := [5]int{b.ShedPoint, b.ShedTarget, b.FoldKeeps, b.Recap, b.RepoMapChars}
		want := [5]int{tt.shed, tt.target, tt.keeps, tt.recap, tt.chars}
		if got != want {
			t.Errorf("NewBudget(%d, %d) = S/T/K/R/M %v, want %v", tt.window, tt.reserve, got, want)
		}
		if b.Usable != tt.window-tt.reserve {
			t.Errorf("usable = %d, want %d", b.Usable, tt.window-tt.reserve)
		}
	}
}

func TestBudgetFractionsFloorExactly(t *testing.T) {
	// Integer arithmetic: no float rounding ever lifts a floor.
	for u := 1; u < 200000; u += 7 {
		b := NewBudget(u+100, 100)
		if b.ShedPoint*10 > 9*u || (b.ShedPoint+1)*10 <= 9*u {
			t.Fatalf("U=%d: S=%d is not floor(0.9U)", u, b.ShedPoint)
		}
		if b.ShedTarget*100 > 63*u || (b.ShedTarget+1)*100 <= 63*u {
			t.Fatalf("U=%d: T=%d is not floor(0.63U)", u, b.ShedTarget)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tt := range []struct{ w, r int }{{0, 0}, {-5, 0}, {1000, 1000}, {1000, 2000}, {1000, -1}} {
		if Validate(tt.w, tt.r) == nil {
			t.Errorf("Validate(%d, %d) accepted", tt.w, tt.r)
		}
	}
	if err := Validate(24000, 6144); err != nil {
		t.Errorf("Validate(24000, 6144): %v", err)
	}
}

func TestRepoMapChars(t *testing.T) {
	for _, tt := range []struct{ w, want int }{{0, 3200}, {8000, 3200}, {16000, 3200}, {20000, 4000}, {60000, 12000}, {1 << 20, 12000}} {
		if got := RepoMapChars(tt.w); got != tt.want {
			t.Errorf("RepoMapChars(%d) = %d, want %d", tt.w, got, tt.want)
		}
	}
}

func TestReserve(t *testing.T) {
	var r Reserve
	if got := r.Tokens(24000); got != 2048 {
		t.Errorf("initial reserve %d, want 2048", got)
	}
	r.Observe(1000)
	if got := r.Tokens(24000); got != 2048 {
		t.Errorf("reserve after a small completion %d, want 2048", got)
	}
	r.Observe(5000)
	if got := r.Tokens(24000); got != 5000 {
		t.Errorf("reserve after a 5000-token completion %d, want 5000", got)
	}
	r.Observe(3000)
	if got := r.Tokens(24000); got != 5000 {
		t.Errorf("reserve fell to %d after a smaller completion", got)
	}
	r.Observe(9000)
	if got := r.Tokens(24000); got != 6000 {
		t.Errorf("reserve %d, want capped at a quarter of the window (6000)", got)
	}
	if got := r.Tokens(0); got != 9000 {
		t.Errorf("reserve with no window %d, want 9000", got)
	}
	if got := r.Tokens(6000); got != 1500 {
		t.Errorf("small window: reserve %d, want 1500 (a quarter)", got)
	}
	p := Reserve{Pinned: 3000, Largest: 5000}
	if got := p.Tokens(24000); got != 3000 {
		t.Errorf("pinned reserve %d, want 3000", got)
	}
	// A pin is taken as given, not capped at a quarter (issue 27): the
	// seed's 24k window with 6144 pinned sheds at 16.1k, back to 11.2k.
	if got := p.Tokens(8000); got != 3000 {
		t.Errorf("pinned reserve on a small window %d, want 3000 as pinned", got)
	}
	seed := Reserve{Pinned: 6144}
	if b := NewBudget(24000, seed.Tokens(24000)); b.Reserve != 6144 || b.ShedPoint != 16070 || b.ShedTarget != 11249 {
		t.Errorf("24k with 6144 pinned: %+v, want reserve 6144, shed point 16070, target 11249", b)
	}
	// Up to half the window, so the usable window is never the smaller.
	if got, big := p.Tokens(5000), (Reserve{Pinned: 3000}); got != 2500 || !big.Capped(5000) || big.Capped(6000) {
		t.Errorf("pinned 3000 on a 5000 window: %d, want 2500 (half); capped %v", got, big.Capped(5000))
	}
}

func TestAnswerFloor(t *testing.T) {
	for _, c := range []struct{ window, reserve, want int }{
		{2048, 512, 256},  // never below 256
		{4096, 1024, 256}, // a sixteenth of the window is 256
		{8192, 2048, 512}, // a sixteenth
		{16384, 2048, 1024},
		{131072, 2048, 1024}, // at most 1024
		{16384, 1000, 616},   // never above what a request at the usable window leaves
		{16384, 500, 256},
	} {
		if got := AnswerFloor(c.window, c.reserve); got != c.want {
			t.Errorf("AnswerFloor(%d, %d) = %d, want %d", c.window, c.reserve, got, c.want)
		}
	}
}

func TestMaxTokens(t *testing.T) {
	tests := []struct {
		window, prompt, limit, setting, want int
	}{
		{24000, 16000, 0, 0, 24000 - 16000 - 384},
		{24000, 16000, 4096, 0, 4096},
		{24000, 16000, 0, 1000, 1000},
		{24000, 16000, 4096, 2000, 2000},
		{24000, 23900, 0, 0, 1},
		{0, 5000, 4096, 0, 0},     // no window: left to the server
		{0, 5000, 4096, 800, 800}, // unless REIKA_MAX_TOKENS
	}
	for _, tt := range tests {
		if got := MaxTokens(tt.window, tt.prompt, tt.limit, tt.setting); got != tt.want {
			t.Errorf("MaxTokens(%d, %d, %d, %d) = %d, want %d", tt.window, tt.prompt, tt.limit, tt.setting, got, tt.want)
		}
	}
}

func TestImportsOnlyStdlib(t *testing.T) {
	if deps := deptest.Deps(t, "github.com/reika-lsp/reika-lsp/ctxwin"); len(deps) != 1 || deps[0] != "github.com/reika-lsp/reika-lsp/ctxwin" {
		t.Errorf("ctxwin imports outside the standard library: %v", deps)
	}
}
