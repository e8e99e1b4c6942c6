package ctxwin

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"
)

// Cut sizes.
const (
	// SmallResult results (in tokens) take their room before the rest
	// splits what remains.
	SmallResult = 256
	// minCutTokens is the least room a cut result gets: its marker and a
	// little of its start and end.
	minCutTokens = 64
)

// cutResults shares room tokens between the results of one round (docs/design.md
// §3.5): the task-defining payload first, then the newest read, then small
// results, then the rest split what remains. Each result is cut from its
// whole Text, so cutting again with more room restores more.
//
// A text the engine counted (its tokenizer, or its report of a request
// that carried the text whole) is priced at that count and cut at its own
// density; the cut view then costs its share of the count.
func cutResults(results []*Result, room int, est *Estimator) {
	need := make([]int, len(results))
	counted := make([]bool, len(results))
	total := 0
	for i, r := range results {
		need[i], counted[i] = est.wholeTokens(r)
		if !counted[i] {
			need[i] = est.Tokens(len(r.Text), false)
		}
		total += need[i]
	}
	if total <= room {
		for _, r := range results {
			uncut(r)
		}
		return
	}
	give := shareRoom(results, need, room)
	for i, r := range results {
		cutToShare(r, give[i], need[i], counted[i], est)
	}
}

// shareRoom decides how many of room's tokens each result gets, given what
// each needs whole: the task-defining payload first, then the newest read,
// then small results, then the rest split what remains.
func shareRoom(results []*Result, need []int, room int) []int {
	give := make([]int, len(results))
	remaining := room
	grant := func(i int) {
		g := min(need[i], max(remaining, 0))
		give[i] = g
		remaining -= g
	}
	done := make([]bool, len(results))
	// The task-defining payload first.
	for i, r := range results {
		if r.Task {
			grant(i)
			done[i] = true
		}
	}
	// Then the newest read.
	for i := len(results) - 1; i >= 0; i-- {
		if !done[i] && results[i].Kind == KindRead {
			grant(i)
			done[i] = true
			break
		}
	}
	// Then small results.
	for i := range results {
		if !done[i] && need[i] <= SmallResult {
			grant(i)
			done[i] = true
		}
	}
	// The rest split what remains: smallest first, each at most an equal
	// share of what is left, so what a small one leaves goes to the others.
	var rest []int
	for i := range results {
		if !done[i] {
			rest = append(rest, i)
		}
	}
	sort.SliceStable(rest, func(a, b int) bool { return need[rest[a]] < need[rest[b]] })
	for k, i := range rest {
		share := max(remaining, 0) / (len(rest) - k)
		give[i] = min(need[i], share)
		remaining -= give[i]
	}
	return give
}

// cutToShare cuts r to the give tokens it was granted (at least
// minCutTokens) of the need it has whole; a counted text is cut at its own
// density and its cut view priced provisionally.
func cutToShare(r *Result, give, need int, counted bool, est *Estimator) {
	if give >= need {
		uncut(r)
		return
	}
	g := max(give, minCutTokens)
	if !counted {
		cutTo(r, est.CharsFor(g))
		return
	}
	perToken := float64(len(r.Text)) / float64(max(need, 1))
	cutTo(r, int(float64(g)*perToken))
	view := int(math.Ceil(float64(len(r.View)) / perToken))
	est.provisional(r.message(), view+est.overhead())
}

func uncut(r *Result) {
	if r.Cut {
		r.Cut = false
		r.View = ""
	}
}

// cutTo keeps the start and the end of r.Text within keep bytes, with a
// marker between them saying the result hit the context limit and, when the
// whole output was saved, where.
func cutTo(r *Result, keep int) {
	r.Cut = true
	r.View = CutText(r.Text, keep, func(lines, bytes int) string { return cutMarker(r, lines, bytes) })
}

// CutText keeps the start and end of text within about keep bytes, snapped
// to line ends, with marker(omittedLines, omittedBytes) between them.
func CutText(text string, keep int, marker func(lines, bytes int) string) string {
	if len(text) <= keep {
		return text
	}
	// Size the marker for the worst case, then split the rest 60/40.
	m := marker(strings.Count(text, "\n")+1, len(text))
	body := max(keep-len(m), 0)
	headEnd := snapBack(text, body*6/10)
	tailStart := snapForward(text, len(text)-(body-headEnd), headEnd)
	omitted := text[headEnd:tailStart]
	return text[:headEnd] + marker(strings.Count(omitted, "\n"), len(omitted)) + text[tailStart:]
}

// snapBack moves i back to just after a line end within the last fifth, or
// to a rune start.
func snapBack(s string, i int) int {
	i = validCut(s, i)
	if j := strings.LastIndexByte(s[:i], '\n'); j >= 0 && j+1 >= i*4/5 {
		return j + 1
	}
	return i
}

// snapForward moves i forward to just after a line end when one is near,
// or to a rune start; never below floor.
func snapForward(s string, i, floor int) int {
	i = max(i, floor)
	if i >= len(s) {
		return len(s)
	}
	limit := i + (len(s)-i)/5
	if j := strings.IndexByte(s[i:], '\n'); j >= 0 && i+j+1 <= limit {
		return i + j + 1
	}
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}

// validCut moves i back to the start of a rune.
func validCut(s string, i int) int {
	if i >= len(s) {
		return len(s)
	}
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

func cutMarker(r *Result, lines, bytes int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n[… %d lines (%d bytes) cut here: this result hit the context limit.", lines, bytes)
	switch {
	case r.SavedTo != "":
		fmt.Fprintf(&b, " The whole output is in %s; page through it with read.", r.SavedTo)
	case r.Kind == KindRead && r.Path != "":
		fmt.Fprintf(&b, " Read %s with start_line and end_line to see the rest.", r.Path)
	default:
		b.WriteString(" Narrow the request to see the rest.")
	}
	b.WriteString(" …]\n")
	return b.String()
}
