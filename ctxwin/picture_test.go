package ctxwin

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPicture(t *testing.T) {
	b := NewBudget(24000, 6144)
	p := Picture(b, 2900, 60)
	lines := strings.Split(p, "\n")
	bar := lines[1]
	if n := utf8.RuneCountInString(bar); n != 60 {
		t.Fatalf("bar of %d columns, want 60:\n%s", n, p)
	}
	runes := []rune(bar)
	// 2900/24000 of 60 columns is 7 columns of fixed prefix; the reserve
	// is the last 6144/24000 of 60, 15 columns.
	if got := strings.Count(bar, "▓"); got != 7 {
		t.Errorf("%d fixed-prefix columns, want 7:\n%s", got, p)
	}
	if got := strings.Count(bar, "█"); got != 15 {
		t.Errorf("%d reserve columns, want 15:\n%s", got, p)
	}
	// Markers at the shed target (11249 → column 28) and the shed point
	// (16070 → column 40).
	if runes[28] != '│' || runes[40] != '│' {
		t.Errorf("markers not at columns 28 and 40:\n%s", p)
	}
	for _, want := range []string{"shed target 11249", "shed point 16070", "reserve 6144", "24k"} {
		if !strings.Contains(p, want) {
			t.Errorf("picture lacks %q:\n%s", want, p)
		}
	}
}
