package ctxwin

import "strings"

// Decide the fold (DESIGN.md §3.8), the third step of a shrink: when
// shedding cannot reach the shed target (it cannot touch the current
// round), the oldest rounds fold in the same event, keeping the newest
// that fit in the fold keeps, and always the newest item. A tool call and
// its result are never separated: whole rounds fold. The prompt of the turn
// in progress and the rounds holding results that define its task stay in
// view (pinned) wherever they are; a later fold folds them once their turn
// is over. A fold must shrink the request: the recap, with the longest note
// it keeps, must cost less than what it replaces, so the note round never
// runs for a fold that is then called off. A fold absorbs the messages of
// the events before it (their shed entries move into its message) and
// makes the sheds inside what it folds moot.

// decideFold folds, when folding shrinks the draft (a fold on demand folds
// whenever there is something to fold).
func (d *draft) decideFold(note string) {
	m := d.m
	upto := m.foldBoundary(d.b, d.costs)
	keep := m.keepInView(upto)
	leaving := d.leaving(upto, keep)
	if len(leaving) == 0 {
		return
	}
	if d.ev.Reason != ReasonCompact {
		// What it replaces: the items leaving view. (The messages it
		// absorbs move into its own.)
		replaced := 0
		for _, i := range leaving {
			replaced += d.costs[i]
		}
		longest := m.fold(d.b, upto, keep, leaving, strings.Repeat("n", m.est.CharsFor(d.b.Recap)*3/10))
		if longest.RecapTokens >= replaced {
			return
		}
	}
	d.ev.Fold = m.fold(d.b, upto, keep, leaving, note)
	d.afterFold()
}

// afterFold drops the sheds the fold made moot, takes the absorbed asides
// out of the kept items' costs, and lists in the message the entries of
// the shed results still in view.
func (d *draft) afterFold() {
	h := d.m.H
	kept := d.ev.Shed[:0]
	shedNow := map[*Result]bool{}
	for _, c := range d.ev.Shed {
		if !d.inViewAfter(c.Item) {
			continue
		}
		kept = append(kept, c)
		if c.Result >= 0 {
			shedNow[h.Items[c.Item].Results[c.Result]] = true
		}
	}
	d.ev.Shed = kept
	d.entries = nil
	for i, it := range h.Items {
		if !d.inViewAfter(i) {
			continue
		}
		d.costs[i] -= d.m.asideTokens(i)
		for j, r := range it.Results {
			switch {
			case shedNow[r]:
				d.entries = append(d.entries, d.entryOf(i, j))
			case r.Shed && r.Entry != "":
				d.entries = append(d.entries, r.Entry) // absorbed
			}
		}
	}
}

// entryOf is the entry of result j of item i that this draft sheds.
func (d *draft) entryOf(i, j int) string {
	for _, c := range d.ev.Shed {
		if c.Item == i && c.Result == j {
			return c.Entry
		}
	}
	return ""
}

// leaving lists the items in view before upto that the fold takes out of
// view: all but keep.
func (d *draft) leaving(upto int, keep []int) []int {
	var out []int
	for i := 0; i < upto; i++ {
		if d.m.H.InView(i) && !contains(keep, i) {
			out = append(out, i)
		}
	}
	return out
}

// foldBoundary is the first item a fold keeps: the newest items that fit
// in the fold keeps, and always the newest item.
func (m *Manager) foldBoundary(b Budget, costs []int) int {
	h := m.H
	last := len(h.Items) - 1
	if last < 0 {
		return h.Folded
	}
	kept := costs[last]
	upto := last
	for i := last - 1; i >= h.Folded; i-- {
		if kept+costs[i] > b.FoldKeeps {
			break
		}
		kept += costs[i]
		upto = i
	}
	return upto
}

// keepInView lists the items before upto that a fold leaves in view: the
// prompt of the turn in progress and its rounds with a result that defines
// the task.
func (m *Manager) keepInView(upto int) []int {
	h := m.H
	turn := h.Turns()
	var keep []int
	for i := 0; i < upto && i < len(h.Items); i++ {
		it := h.Items[i]
		if it.Turn != turn || !h.InView(i) {
			continue
		}
		if !it.IsRound() {
			keep = append(keep, i)
			continue
		}
		for _, r := range it.Results {
			if r.Task {
				keep = append(keep, i)
				break
			}
		}
	}
	return keep
}

// fold builds the fold of the items leaving view before upto.
func (m *Manager) fold(b Budget, upto int, keep, leaving []int, note string) *FoldChange {
	h := m.H
	items := make([]*Item, 0, len(leaving))
	rounds := 0
	for _, i := range leaving {
		items = append(items, h.Items[i])
		if h.Items[i].IsRound() {
			rounds++
		}
	}
	taskAbove := false
	for i := range h.Items {
		if it := h.Items[i]; it.Turn == h.Turns() && !it.IsRound() && (i >= upto || contains(keep, i)) {
			taskAbove = true
		}
	}
	rc := buildRecap(h.Recap, items, note, h.Turns(), taskAbove, noteAsMessages)
	rc.render(m.est.CharsFor(b.Recap))
	return &FoldChange{
		Upto:        upto,
		Keep:        keep,
		Rounds:      rounds,
		Recap:       rc,
		RecapTokens: m.est.Tokens(len(rc.Text), false),
	}
}

// asideTokens is what the messages appended after item i cost: the
// messages of events, and notices of older logs.
func (m *Manager) asideTokens(i int) int {
	it := m.H.Items[i]
	var msgs []Message
	if it.Notice != "" {
		msgs = append(msgs, Message{Role: RoleUser, Content: it.Notice})
	}
	if it.After != nil {
		msgs = it.After.messages(msgs)
	}
	n := 0
	for _, msg := range msgs {
		n += m.est.MessageTokens(msg)
	}
	return n
}

func contains[T comparable](s []T, x T) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}
