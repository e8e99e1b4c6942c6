package outline

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// partialNote opens the rendering of an outline of a file with syntax errors.
const partialNote = "(syntax errors: the outline may be incomplete)"

// Render renders the outline one entry per line, members indented by two
// spaces:
//
//	L12-40 func (s *Server) Serve(l net.Listener) error
//	L50-62 type conn struct
//	  L51 server *Server
//
// The result is at most budget bytes (so at most budget characters); budget
// <= 0 means no limit. When not everything fits, imports go first, then
// members, then private top-level declarations, then public ones from the
// end of the file, and a last line says how many entries were left out
// ("… 37 of 220 entries left out"). The result has no trailing newline.
func (o *Outline) Render(budget int) string {
	var items []item
	for _, e := range o.Entries {
		items = flatten(items, e, 0, -1, 0, false)
	}
	var note string
	if o.Partial {
		note = partialNote
	}
	return fit(note, items, budget)
}

// RenderLines renders, as Render does, only the entries whose lines meet
// lines from to to (1-based, inclusive): the declarations a read of those
// lines showed, and those it showed part of (a function whose body it
// began in the middle). A class or struct that meets them shows with only
// its members that meet them. "" when no entry meets them.
func (o *Outline) RenderLines(from, to, budget int) string {
	var items []item
	for _, e := range o.Entries {
		if e, ok := within(e, from, to); ok {
			items = flatten(items, e, 0, -1, 0, false)
		}
	}
	var note string
	if o.Partial && len(items) > 0 {
		note = partialNote
	}
	return fit(note, items, budget)
}

// within is e with only the members that meet lines from to to, and
// whether e itself meets them.
func within(e Entry, from, to int) (Entry, bool) {
	end := max(e.EndLine, e.Line)
	if e.Line > to || end < from {
		return e, false
	}
	var kids []Entry
	for _, c := range e.Children {
		if c, ok := within(c, from, to); ok {
			kids = append(kids, c)
		}
	}
	e.Children = kids
	return e, true
}

// maxRenderSig bounds a signature in a rendering: a shed summary is read in
// a small window.
const maxRenderSig = 120

// item is one line of a rendering.
type item struct {
	text   string
	prio   int // lower is kept first
	rank   int // order within a priority: members by their index in their parent
	parent int // index of the parent item, -1 at the top level
}

func flatten(items []item, e Entry, depth, parent, rank int, minorParent bool) []item {
	var b strings.Builder
	b.WriteString(strings.Repeat("  ", depth))
	b.WriteString(lineRange(e.Line, e.EndLine))
	b.WriteByte(' ')
	b.WriteString(cut(display(e), maxRenderSig))
	it := item{text: b.String(), parent: parent, rank: rank}
	switch {
	case depth == 0 && e.Kind == KindImports:
		it.prio = 4
	case depth == 0 && !e.minor:
		it.prio = 0
	case depth == 0:
		it.prio = 1
	case !e.minor && !minorParent:
		it.prio = 2
	default:
		it.prio = 3
	}
	items = append(items, it)
	self := len(items) - 1
	for i, c := range e.Children {
		items = flatten(items, c, depth+1, self, i, minorParent || e.minor)
	}
	return items
}

func lineRange(a, b int) string {
	if b <= a {
		return "L" + strconv.Itoa(a)
	}
	return "L" + strconv.Itoa(a) + "-" + strconv.Itoa(b)
}

func display(e Entry) string {
	if e.Signature != "" {
		return e.Signature
	}
	if e.Name == "" {
		return e.Kind
	}
	return e.Kind + " " + e.Name
}

// fit joins note and the items that fit in budget bytes, keeping whole lines
// in priority order (an item only with its parent) and ending with a line
// that counts what was left out.
func fit(note string, items []item, budget int) string {
	if len(items) == 0 {
		return ""
	}
	total := 0
	if note != "" {
		total += len(note) + 1
	}
	for _, it := range items {
		total += len(it.text) + 1
	}
	total-- // no trailing newline
	if budget <= 0 || total <= budget {
		return joinAll(note, items)
	}

	// The trailer is sized for the most that could be left out.
	room := budget - len(trailer(len(items), len(items)))
	used := 0
	if note != "" && len(note)+1 <= room {
		used += len(note) + 1
	} else {
		note = ""
	}
	keep := make([]bool, len(items))
	kept := 0
	for _, i := range priorityOrder(items) {
		it := items[i]
		if it.parent >= 0 && !keep[it.parent] {
			continue
		}
		if used+len(it.text)+1 > room {
			continue
		}
		keep[i] = true
		kept++
		used += len(it.text) + 1
	}
	var b strings.Builder
	if note != "" {
		b.WriteString(note)
		b.WriteByte('\n')
	}
	for i, it := range items {
		if keep[i] {
			b.WriteString(it.text)
			b.WriteByte('\n')
		}
	}
	t := trailer(len(items)-kept, len(items))
	if b.Len()+len(t) > budget {
		return "" // not even the trailer fits
	}
	b.WriteString(t)
	return b.String()
}

// joinAll joins note and every item, a line each.
func joinAll(note string, items []item) string {
	lines := make([]string, 0, len(items)+1)
	if note != "" {
		lines = append(lines, note)
	}
	for _, it := range items {
		lines = append(lines, it.text)
	}
	return strings.Join(lines, "\n")
}

// priorityOrder gives the indexes of items in the order fit keeps them:
// by priority; top-level entries in source order; members round-robin over
// their parents (the first member of each class, then the second...), so
// every class shows its first members rather than one class all.
func priorityOrder(items []item) []int {
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if d := items[a].prio - items[b].prio; d != 0 {
			return d
		}
		if items[a].parent < 0 {
			return 0
		}
		return items[a].rank - items[b].rank
	})
	return order
}

func trailer(left, total int) string {
	return fmt.Sprintf("… %d of %d entries left out", left, total)
}
