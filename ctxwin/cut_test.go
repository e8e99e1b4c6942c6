package ctxwin

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// Table tests of the cut step (cut.go): how a round's results share the
// room left, and what a cut result keeps.

// TestShareRoom: the task's payload first, then the newest read, then
// small results, then the rest split what remains, smallest first, each
// at most an equal share.
func TestShareRoom(t *testing.T) {
	read := func() *Result { return &Result{Kind: KindRead} }
	bash := func() *Result { return &Result{Kind: KindBash} }
	task := func() *Result { return &Result{Kind: KindRead, Task: true} }
	tests := []struct {
		name    string
		results []*Result
		need    []int
		room    int
		want    []int
	}{
		{"all fit", []*Result{bash(), bash()}, []int{100, 200}, 1000, []int{100, 200}},
		{"the task first", []*Result{bash(), task()}, []int{1000, 900}, 1000, []int{100, 900}},
		{"the newest read next", []*Result{read(), bash(), read()}, []int{1000, 1000, 800}, 1000, []int{100, 100, 800}},
		{"then the small", []*Result{bash(), bash()}, []int{5000, 200}, 1000, []int{800, 200}},
		{"the rest split equally", []*Result{bash(), bash(), bash()}, []int{5000, 5000, 5000}, 900, []int{300, 300, 300}},
		{"what a small one leaves goes to the others", []*Result{bash(), bash(), bash()}, []int{5000, 400, 5000}, 1200, []int{400, 400, 400}},
		{"the smaller of the rest takes less than its share", []*Result{bash(), bash()}, []int{5000, 300}, 1000, []int{700, 300}},
		{"no room left", []*Result{task(), bash()}, []int{2000, 500}, 1000, []int{1000, 0}},
		{"a negative room gives nothing", []*Result{bash()}, []int{500}, -10, []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := shareRoom(tt.results, tt.need, tt.room); !slices.Equal(got, tt.want) {
				t.Errorf("shareRoom(%v, %d) = %v, want %v", tt.need, tt.room, got, tt.want)
			}
		})
	}
}

// TestCutText: a cut keeps the start and the end within the bytes given,
// at line ends where one is near, never inside a character, with the
// marker saying what it left out.
func TestCutText(t *testing.T) {
	marker := func(lines, bytes int) string { return fmt.Sprintf("\n[%d lines, %d bytes]\n", lines, bytes) }
	text := lines(50, "cut")
	tests := []struct {
		name string
		text string
		keep int
	}{
		{"lines", text, 600},
		{"tight", text, 100},
		{"no room for more than the marker", text, 10},
		{"one long line", strings.Repeat("x", 3000), 500},
		{"characters of several bytes", strings.Repeat("é", 2000), 301},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CutText(tt.text, tt.keep, marker)
			i := strings.Index(got, "\n[")
			j := strings.Index(got, " bytes]\n")
			if i < 0 || j < 0 {
				t.Fatalf("no marker in %q", got)
			}
			head, tail := got[:i], got[j+len(" bytes]\n"):]
			if !strings.HasPrefix(tt.text, head) || !strings.HasSuffix(tt.text, tail) {
				t.Fatalf("the cut keeps %q … %q, not the start and end of the text", head, tail)
			}
			var lines, bytes int
			fmt.Sscanf(got[i:], "\n[%d lines, %d bytes]\n", &lines, &bytes)
			if omitted := len(tt.text) - len(head) - len(tail); bytes != omitted || lines != strings.Count(tt.text[len(head):len(tt.text)-len(tail)], "\n") {
				t.Errorf("the marker says %d lines, %d bytes; the cut left out %d bytes", lines, bytes, omitted)
			}
			if len(head)+len(tail) > max(tt.keep, 0) {
				t.Errorf("the cut keeps %d bytes of text, more than %d", len(head)+len(tail), tt.keep)
			}
			if !utf8.ValidString(head) || !utf8.ValidString(tail) {
				t.Error("the cut split a character")
			}
			if strings.Contains(tt.text, "\n") && len(head) > 0 && !strings.HasSuffix(head, "\n") {
				t.Errorf("the start kept ends inside a line: %q", head[max(len(head)-20, 0):])
			}
		})
	}
	if got := CutText("short", 10, marker); got != "short" {
		t.Errorf("a text within the bytes was cut: %q", got)
	}
}

func TestCutMarker(t *testing.T) {
	tests := []struct {
		r    Result
		want string
	}{
		{Result{Kind: KindBash, SavedTo: "/tmp/out.txt"}, "The whole output is in /tmp/out.txt; page through it with read."},
		{Result{Kind: KindRead, Path: "a.go"}, "Read a.go with start_line and end_line to see the rest."},
		{Result{Kind: KindGrep}, "Narrow the request to see the rest."},
	}
	for _, tt := range tests {
		got := cutMarker(&tt.r, 3, 120)
		if !strings.HasPrefix(got, "\n[… 3 lines (120 bytes) cut here: this result hit the context limit.") || !strings.Contains(got, tt.want) || !strings.HasSuffix(got, " …]\n") {
			t.Errorf("%+v: marker %q, want it to say %q", tt.r, got, tt.want)
		}
	}
}

func TestValidCutAndSnaps(t *testing.T) {
	s := "ab\nécd\nef"
	tests := []struct {
		name string
		got  int
		want int
	}{
		{"validCut at a rune start", validCut(s, 3), 3},
		{"validCut inside é", validCut(s, 4), 3},
		{"validCut past the end", validCut(s, 100), len(s)},
		{"snapBack to a line end within the last fifth", snapBack("abcdefghij\nkl", 12), 11},
		{"snapBack to a line end too far back", snapBack(s, 5), 5},
		{"snapBack with no line end near", snapBack("abcdefghij\nk", 5), 5},
		{"snapForward to a line end", snapForward("abcdef\nghijklmnopqrstuvwxyz", 5, 0), 7},
		{"snapForward never below the floor", snapForward(s, 1, 6), 6},
		{"snapForward past the end", snapForward(s, 100, 0), len(s)},
		{"snapForward to a rune start", snapForward("aéééééééééééééééééééé", 2, 0), 3},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, tt.got, tt.want)
		}
	}
}

// TestCutResultsRestoresWhole: results that fit are shown whole again, and
// a cut is always from the whole text, so more room restores more.
func TestCutResultsRestoresWhole(t *testing.T) {
	var est Estimator
	r := &Result{Kind: KindRead, Path: "a.go", Text: lines(200, "a")}
	cutResults([]*Result{r}, 300, &est)
	small := r.Shown()
	if !r.Cut || len(small) >= len(r.Text) {
		t.Fatalf("not cut to 300 tokens: %d bytes", len(small))
	}
	cutResults([]*Result{r}, 1000, &est)
	if !r.Cut || len(r.Shown()) <= len(small) {
		t.Errorf("more room kept %d bytes, less room %d", len(r.Shown()), len(small))
	}
	cutResults([]*Result{r}, 100000, &est)
	if r.Cut || r.Shown() != r.Text {
		t.Error("room for the whole text did not restore it")
	}
	cutResults([]*Result{r}, 1, &est)
	if got := est.Tokens(len(r.Shown()), false); got < minCutTokens/2 || got > 2*minCutTokens+100 {
		t.Errorf("with no room the cut keeps %d tokens; want about minCutTokens (%d) with its marker", got, minCutTokens)
	}
}
