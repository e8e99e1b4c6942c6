package ctxwin

import (
	"slices"
	"strings"
)

// Decide the fold (docs/design.md §3.8), the third step of a shrink: when
// shedding cannot reach the shed target (it cannot touch the current
// round), the oldest rounds fold in the same event, keeping the newest
// that fit in the fold keeps, and always the newest item. A tool call and
// its result are never separated: whole rounds fold. The prompt of the turn
// in progress and the rounds holding results that define its task stay in
// view (pinned) wherever they are; a later fold folds them once their turn
// is over. A fold must shrink the request: the recap, with the longest note
// it keeps, must cost less than what it replaces, so the note round never
// runs for a fold that is then called off. A fold takes out of view the
// messages of the events among what it folds, with their items, and
// absorbs the recap before it; its own sheds inside what it folds are moot,
// and the entries of those of the rounds it keeps go in its message.

// decideFold folds, when folding shrinks the draft (a fold on demand folds
// whenever there is something to fold). The recap is the next step's
// (stepRecap); what decides is the longest recap the note could lead.
func (d *draft) decideFold() {
	m := d.m
	kc := d.keptCosts()
	upto := m.foldBoundary(d.b, kc)
	keep := d.widen(upto, m.keepInView(upto), kc)
	leaving := d.leaving(upto, keep)
	if len(leaving) == 0 {
		return
	}
	if d.ev.Reason != ReasonCompact {
		// What it replaces: the items leaving view, and the recap before.
		replaced := 0
		for i := range d.costs {
			switch {
			case contains(leaving, i):
				replaced += d.costs[i]
			case !d.m.H.InView(i) && !d.m.H.Items[i].Dropped:
			default:
				replaced += m.recapTokens(i)
			}
		}
		_, longest := m.recap(d.b, upto, keep, leaving, strings.Repeat("n", m.est.CharsFor(d.b.Recap)*3/10))
		if longest >= replaced {
			return
		}
	}
	d.ev.Fold = m.fold(upto, keep, leaving)
	d.afterFold()
}

// afterFold drops the sheds the fold made moot and the entries of the
// results they shed, and takes the recap before out of the kept items'
// costs: the fold absorbs it.
func (d *draft) afterFold() {
	h := d.m.H
	kept := d.ev.Shed[:0]
	d.entries = nil
	for _, c := range d.ev.Shed {
		if d.foldedNow(c.Item) {
			continue
		}
		kept = append(kept, c)
		if c.Result >= 0 {
			d.entries = append(d.entries, newEntry(c.Item, c.Result, h.Items[c.Item].Results[c.Result], c.Entry))
		}
	}
	d.ev.Shed = kept
	for i := range h.Items {
		if !d.foldedNow(i) {
			d.costs[i] -= d.m.recapTokens(i)
		}
	}
	if h.RecapFirst && h.Recap != nil {
		d.fixed -= d.m.est.MessageTokens(Message{Role: RoleUser, Content: h.Recap.Text}) // a recap rendered first
	}
}

// widen keeps in view, with the items keep holds before upto, the items
// just before them, as long as what would stay between two deletions is
// shorter than minRun: a short prompt kept between folded rounds would stop
// the engine's reuse of everything after it (layout.go).
func (d *draft) widen(upto int, keep, costs []int) []int {
	h := d.m.H
	for changed := true; changed; {
		changed = false
		for _, k := range keep {
			// The island of kept items around k, and the items that leave
			// on each side of it.
			start, end, run := k, k, 0
			for start > 0 && (contains(keep, start-1) || !h.InView(start-1)) {
				start--
			}
			for end+1 < upto && (contains(keep, end+1) || !h.InView(end+1)) {
				end++
			}
			for i := start; i <= end; i++ {
				if h.InView(i) {
					run += costs[i]
				}
			}
			if run >= minRun || end+1 >= upto || start == 0 {
				continue // long enough, joined to the kept rounds, or the common prefix
			}
			keep = append(keep, start-1)
			changed = true
			break
		}
	}
	slices.Sort(keep)
	return keep
}

// leaving lists the items before upto that the fold folds: those in view
// but keep, and the rounds sheds took out of view, whose entries the recap
// takes over.
func (d *draft) leaving(upto int, keep []int) []int {
	h := d.m.H
	var out []int
	for i := 0; i < upto; i++ {
		if h.shows(i) && !contains(keep, i) {
			out = append(out, i)
		}
	}
	return out
}

// keptCosts is what each item would cost kept by a fold: what it shows
// now, but the recap before, which the fold absorbs.
func (d *draft) keptCosts() []int {
	out := make([]int, len(d.costs))
	for i := range d.costs {
		out[i] = d.costs[i] - d.m.recapTokens(i)
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
// the task, and what an earlier fold of the turn left in view with them.
// (The first deletion of a fold then stays after them: a deletion earlier
// would let llama-server's host memory restore an older prompt that shares
// them, which holds none of the rounds the fold keeps.)
func (m *Manager) keepInView(upto int) []int {
	h := m.H
	turn := h.Turns()
	var keep []int
	for i := 0; i < upto && i < len(h.Items); i++ {
		it := h.Items[i]
		if !h.InView(i) {
			continue
		}
		if it.Pinned == turn {
			keep = append(keep, i)
			continue
		}
		if it.Turn != turn {
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

// fold is the fold of the items leaving view before upto, without its
// recap (stepRecap writes it).
func (m *Manager) fold(upto int, keep, leaving []int) *FoldChange {
	rounds := 0
	for _, i := range leaving {
		if m.H.Items[i].IsRound() {
			rounds++
		}
	}
	return &FoldChange{Upto: upto, Keep: keep, Rounds: rounds, Marks: m.foldMarks(upto, keep)}
}

// recap is the recap of the items leaving view before upto, led by note,
// and what it costs.
func (m *Manager) recap(b Budget, upto int, keep, leaving []int, note string) (*Recap, int) {
	h := m.H
	items := make([]*Item, 0, len(leaving))
	for _, i := range leaving {
		items = append(items, h.Items[i])
	}
	taskAbove := false
	for i := range h.Items {
		if it := h.Items[i]; it.Turn == h.Turns() && !it.IsRound() && (i >= upto || contains(keep, i)) {
			taskAbove = true
		}
	}
	rc := buildRecap(h.Recap, items, note, h.Turns(), taskAbove, noteAsMessages)
	rc.render(m.est.CharsFor(b.Recap))
	return rc, m.est.Tokens(len(rc.Text), false)
}

// openingChunk is the largest n_cache_reuse whose chunk scan reuses an
// event's opening kept between two deletions: the opening is about 17
// tokens from its tag to the end of its line.
const openingChunk = 12

// foldMarks lists 1 + each item whose message keeps its opening in view,
// where it was, after a fold that keeps items keep and those from upto on
// (see FoldChange.Marks). The fold's first deletion gets one: the newest
// message an event appended that the request shows among the items of that
// deletion, which then starts inside the opening. An opening kept before
// stays where nothing around it is deleted.
//
// Why: when a request keeps less than half of its slot, llama-server saves
// the slot in host memory and restores instead any earlier prompt that
// shares a longer common prefix with the request; that prompt holds none of
// the rounds the fold keeps, so the chunk reuse serves none of them. Folds
// delete from the same place, after the items that stay, where earlier
// prompts held other rounds, and whichever shares a few more tokens with
// the first kept message would win. An event's opening starts with its own
// tag (contextMark), so an earlier prompt shares no more of it than the
// slot's own message there does.
func (m *Manager) foldMarks(upto int, keep []int) []int {
	h := m.H
	if m.chunkReuse <= 0 || m.chunkReuse > openingChunk {
		return nil // the scan could not reuse an opening between two deletions
	}
	var marks, heads []int
	newest, deleting, marked := 0, false, false
	end := func() { // the end of a run of items out of view
		switch {
		case !deleting:
			marks = append(marks, heads...) // nothing around them is deleted
		case !marked && newest > 0:
			marks = append(marks, newest)
			marked = true
		}
		heads, newest, deleting = nil, 0, false
	}
	for i := 0; i < min(upto, len(h.Items)); i++ {
		it := h.Items[i]
		head := !h.InView(i) && it.After != nil && it.After.Head
		switch {
		case contains(keep, i):
			end()
		case head:
			heads = append(heads, i+1)
			newest = i + 1
		case h.shows(i):
			deleting = true
			if it.After != nil && it.After.Message != "" {
				newest = i + 1
			}
		}
	}
	end()
	return marks
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

// openingTokens is what an event's message costs cut to its opening, the
// first line a fold keeps in place (foldMarks), priced as new text.
func (m *Manager) openingTokens(a *Aside) int {
	return m.est.Tokens(len(RoleUser)+len(firstLine(a.Message)), false) + m.est.overhead()
}

// recapTokens is what the fold's message after item i costs, 0 when none
// follows it.
func (m *Manager) recapTokens(i int) int {
	it := m.H.Items[i]
	if it.After == nil || !it.After.Recap {
		return 0
	}
	n := 0
	for _, msg := range it.After.messages(nil) {
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
