package ctxwin

import (
	"fmt"
	"strings"
)

// Lay out the event (event.go), the last step of a shrink: the deletions
// the steps before chose, and the one message appended after the newest
// item that carries what the event adds. A shrink is planned as a draft,
// priced as each step leaves the request:
//
//	plan:  sheddable → shedTo (shed.go) → decideFold (fold.go) → layout
//
// A draft can be laid out again with the note round's note (Shrink after
// Prepare): the note changes what the event carries, not what must go.

// draft is a shrink being planned.
type draft struct {
	m  *Manager
	b  Budget
	ev *Event
	// costs is each item's tokens as the draft leaves it (its aside
	// included); fixed the tool definitions and the system message; total
	// the request's size with the message so far.
	costs        []int
	fixed, total int
	// entries are the message's entries of the results shed, framed says
	// the message's frame is priced in total.
	entries []string
	framed  bool
	// outlines are the outlines the entries so far list (sameOutline).
	outlines map[string]int
	// assistants is the reply of each item the draft changes; shedNow the
	// results it sheds and dropped the rounds it takes out of view whole.
	assistants map[int]*replyState
	shedNow    map[[2]int]bool
	dropped    map[int]bool
	// note is the note round's note that leads a fold's recap.
	note string
}

// replyState is a reply as the draft leaves it.
type replyState struct {
	reasoningShed bool
	calls         []ToolCall
	cost          int
}

// plan computes a shrink without applying it: shed oldest first, large
// payloads before small, down to the shed target; then fold if that is not
// enough (always, for a fold on demand). It returns nil when there is
// nothing to do.
func (m *Manager) plan(b Budget, reason, note string) *draft {
	d := m.newDraft(b, reason)
	if reason != ReasonCompact {
		d.shedTo(m.sheddable(b), b.ShedTarget)
		d.dropRounds()
		d.guardRuns()
	}
	if reason == ReasonCompact || d.total > b.ShedTarget {
		d.decideFold(note)
		d.dropShortOpenings()
	}
	if len(d.ev.Shed) == 0 && d.ev.Fold == nil {
		return nil
	}
	d.note = note
	return d
}

func (m *Manager) newDraft(b Budget, reason string) *draft {
	costs, fixed := m.costs()
	size := m.size()
	return &draft{m: m, b: b, costs: costs, fixed: fixed, total: size, assistants: map[int]*replyState{},
		shedNow: map[[2]int]bool{}, dropped: map[int]bool{},
		ev: &Event{Reason: reason, Round: m.H.Rounds(), Before: size, At: len(m.H.Items) - 1}}
}

// state is the reply of item i as the draft leaves it.
func (d *draft) state(i int) *replyState {
	s, ok := d.assistants[i]
	if !ok {
		it := d.m.H.Items[i]
		s = &replyState{reasoningShed: it.ReasoningShed, calls: it.Calls, cost: -1}
		d.assistants[i] = s
		s.cost = d.replyTokens(i, s)
	}
	return s
}

// assistant is what item i's reply costs as the draft left it before the
// last change to its state; assistantNow prices the state now and keeps it.
func (d *draft) assistant(i int) int { return d.state(i).cost }

func (d *draft) assistantNow(i int) int {
	s := d.state(i)
	s.cost = d.replyTokens(i, s)
	return s.cost
}

func (d *draft) replyTokens(i int, s *replyState) int {
	a := d.m.H.Items[i].Assistant
	if s.reasoningShed {
		a.Reasoning = ""
	}
	if s.calls != nil {
		a.ToolCalls = s.calls
	}
	a.Role = RoleAssistant
	return d.m.est.MessageTokens(a)
}

// addEntry adds a shed result's entry to the message.
func (d *draft) addEntry(entry string) {
	e := &d.m.est
	if !d.framed {
		d.framed = true
		d.total += e.Tokens(len(RoleUser)+len(contextMark(0))+len(ShedNotice)+len(shedHeading)+80, false) + e.overhead()
	}
	d.entries = append(d.entries, entry)
	if d.outlines == nil {
		d.outlines = map[string]int{}
	}
	d.total += e.Tokens(len(sameOutline(entry, d.outlines))+1, false)
}

// outlineLead starts a read's outline in its entry (shedEntry).
const outlineLead = "\n  outline:\n"

// sameOutline is entry as the event's message writes it: when an entry
// before it in the message (seen, each outline with its round) lists the
// same outline, as two reads of one file do, it says so instead of listing
// it again. A file's outline is a few hundred to a few thousand bytes, and
// a session that reads a file in parts sheds them together.
func sameOutline(entry string, seen map[string]int) string {
	i := strings.Index(entry, outlineLead)
	if i < 0 {
		return entry
	}
	var round int
	if _, err := fmt.Sscanf(entry, "- round %d:", &round); err != nil {
		return entry
	}
	o := entry[i+len(outlineLead):]
	if r, ok := seen[o]; ok {
		return entry[:i] + fmt.Sprintf("\n  outline: as for round %d above", r)
	}
	seen[o] = round
	return entry
}

// Headings of the message.
const (
	foldOpening = " To fit the context window, older rounds were folded into the recap below"
	shedOpening = " To fit the context window, older tool results were shed"
	shedHeading = "Shed, each keeping only its first line where it was:"
)

// layout writes the event's message and returns the event.
func (d *draft) layout() *Event {
	ev := d.ev
	h := d.m.H
	var b strings.Builder
	b.WriteString(contextMark(h.Events + 1))
	switch {
	case ev.Fold != nil && len(d.entries) > 0:
		b.WriteString(foldOpening + ", and older tool results were shed.\n")
	case ev.Fold != nil:
		b.WriteString(foldOpening + ".\n")
	default:
		b.WriteString(shedOpening + ".\n")
	}
	if ev.Fold != nil {
		b.WriteString(ev.Fold.Recap.Text)
		b.WriteString("\n")
	}
	if len(d.entries) > 0 {
		b.WriteString(shedHeading + "\n")
		seen := map[string]int{}
		for _, e := range d.entries {
			b.WriteString(sameOutline(e, seen))
			b.WriteString("\n")
		}
		b.WriteString(ShedNotice)
	}
	ev.Message = strings.TrimRight(b.String(), "\n")
	ev.Note = ""
	if ev.Fold != nil && noteAsMessages {
		ev.Note = strings.TrimSpace(d.note)
	}
	e := &d.m.est
	total := d.fixed
	for i := range h.Items {
		if !d.foldedNow(i) {
			total += d.costs[i]
		}
	}
	total += e.Tokens(len(RoleUser)+len(ev.Message), false) + e.overhead()
	if f := ev.Fold; f != nil {
		for _, k := range f.Marks {
			total += e.Tokens(len(RoleUser)+len(firstLine(h.Items[k-1].After.Message)), false) + e.overhead()
		}
	}
	if ev.Note != "" {
		total += e.Tokens(len(RoleUser)+len(NotePrompt)+len(RoleAssistant)+len(ev.Note), false) + 2*e.overhead()
	}
	ev.After = total
	return ev
}

// noteAsMessages keeps the note round's prompt and reply as the messages
// they were sent as, before the fold's message, rather than copying the
// note into the recap: the engine's slot holds them already.
const noteAsMessages = true

// foldedNow reports whether the draft's fold takes item i out of view.
func (d *draft) foldedNow(i int) bool {
	f := d.ev.Fold
	return f != nil && i < f.Upto && !contains(f.Keep, i)
}

// minRun is the least the request keeps between two deletions, in
// tokens: llama.cpp reuses the text kept after a deletion only in chunks of
// at least n_cache_reuse tokens (64 in issue 14's measurements), so a
// shorter run between two deletions stops the reuse, and everything after
// it is processed again.
const minRun = 64

// openingReplyKeep is the most a reply right after a fold's opening may
// grow, in tokens, by being kept whole rather than changed
// (dropShortOpenings).
const openingReplyKeep = 800

// guardRuns gives up the deletions of reasoning and of long arguments that
// would leave less than minRun tokens kept since the deletion before them
// (a reply's reasoning right after a round taken out of view): the reply
// then stays whole, unless that would leave the request above the usable
// window, where fitting comes before the engine's reuse.
func (d *draft) guardRuns() {
	h := d.m.H
	run := -1 // tokens kept since the last deletion; -1 before the first
	grow := func(n int) {
		if run >= 0 {
			run += n
		}
	}
	for i := 0; i < len(h.Items)-1; i++ {
		it := h.Items[i]
		switch {
		case !h.InView(i):
			continue // not in the request before
		case d.dropped[i]:
			run = 0
			grow(d.costs[i]) // what events appended after it stays
			continue
		case !it.IsRound():
			grow(d.costs[i])
			continue
		}
		if d.cutsReply(i) {
			if run >= 0 && run < minRun && d.total+d.wholeGain(i) <= d.b.Usable {
				d.keepReply(i)
				grow(d.assistant(i))
			} else {
				run = 0
				grow(d.assistant(i))
			}
		} else {
			grow(d.assistant(i))
		}
		for j, r := range it.Results {
			e := &d.m.est
			if d.shedNow[[2]int{i, j}] {
				grow(e.Tokens(len(firstLine(r.Shown()))+1+len(RoleTool), false) + e.overhead())
				run = 0
				continue
			}
			grow(e.MessageTokens(r.message()))
		}
		grow(d.m.asideTokens(i))
	}
}

// dropShortOpenings settles the openings the draft's fold keeps (foldMarks)
// that a reply follows whose reasoning or arguments the draft cuts (the
// first item the draft shows after the opening: rounds it takes out of
// view whole do not count, since nothing of them stays between): the
// opening would be a run between two deletions too short for the engine
// to reuse, and everything after it would be processed again. The reply
// stays whole when that adds at most openingReplyKeep tokens; otherwise
// the opening goes. Measured on the bench (3 sessions, reika): keeping
// every such reply whole, and guarding every run the fold leaves, gave
// 1.11× the lower bound at 16k with chunk reuse but 2.09× instead of 2.01×
// at 32k on prefix only and 43% retention instead of 45% at 16k; dropping
// every such opening gave 1.16×; this, 1.13×, with 2.01× and 45%.
func (d *draft) dropShortOpenings() {
	f := d.ev.Fold
	if f == nil || len(f.Marks) == 0 {
		return
	}
	h := d.m.H
	kept := f.Marks[:0]
	for _, k := range f.Marks {
		next := d.nextShown(k)
		if next >= len(h.Items) || !h.Items[next].IsRound() || d.gone(next) {
			kept = append(kept, k)
			continue
		}
		if !d.cutsReply(next) {
			kept = append(kept, k)
			continue
		}
		if gain := d.wholeGain(next); gain <= openingReplyKeep && d.total+gain <= d.b.Usable {
			d.keepReply(next)
			kept = append(kept, k)
		}
	}
	f.Marks = kept
}

// gone reports whether the draft leaves item i out of view: folded,
// dropped whole now or before. The message an event appended after it
// may stay.
func (d *draft) gone(i int) bool {
	return d.foldedNow(i) || d.dropped[i] || !d.m.H.InView(i)
}

// nextShown is the first item from i on that the draft leaves something
// of in view: the item, or the message an event appended after it.
func (d *draft) nextShown(i int) int {
	h := d.m.H
	for i < len(h.Items) && d.gone(i) && (d.foldedNow(i) || h.Items[i].After == nil) {
		i++
	}
	return i
}

// cutsReply reports whether the draft deletes part of item i's reply: its
// reasoning, or a span of its arguments.
func (d *draft) cutsReply(i int) bool {
	s, ok := d.assistants[i]
	it := d.m.H.Items[i]
	return ok && (s.reasoningShed && !it.ReasoningShed || s.calls != nil && it.Calls == nil)
}

// wholeGain is what keeping item i's reply whole would add to the draft.
func (d *draft) wholeGain(i int) int {
	it := d.m.H.Items[i]
	return d.replyTokens(i, &replyState{reasoningShed: it.ReasoningShed, calls: it.Calls}) - d.assistant(i)
}

// keepReply gives up the draft's changes to item i's reply.
func (d *draft) keepReply(i int) {
	old := d.assistant(i)
	delete(d.assistants, i)
	now := d.assistant(i)
	d.costs[i] += now - old
	d.total += now - old
	kept := d.ev.Shed[:0]
	for _, c := range d.ev.Shed {
		if c.Item != i || c.Result != ShedReasoning && c.Result != ShedArguments {
			kept = append(kept, c)
		}
	}
	d.ev.Shed = kept
}

// refold builds the draft's fold again with the note round's note.
func (d *draft) refold(note string) {
	f := d.ev.Fold
	d.note = note
	d.ev.Fold = d.m.fold(d.b, f.Upto, f.Keep, d.leaving(f.Upto, f.Keep), note)
	d.dropShortOpenings()
}
