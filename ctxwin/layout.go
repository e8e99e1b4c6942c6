package ctxwin

import "strings"

// Lay out the event (event.go), the last step of a shrink: the deletions
// the steps before chose, and the one message appended after the newest
// item that carries what the event adds. A shrink is planned as a draft,
// priced as each step leaves the request:
//
//	plan:  sheddable → shedTo (shed.go) → guardRuns (runs.go)
//	       → decideFold (fold.go) → settleRuns (runs.go) → layout
//
// guardRuns and settleRuns keep what the event keeps between its deletions
// long enough for llama.cpp's chunk scan to reuse.
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
	// entries are the message's entries of the results shed (entries.go),
	// fileTokens what those with an outline cost as written, by file;
	// framed says the message's frame is priced in total. reads are the
	// reads of each file in the history, fileLines the lines of the files
	// the reads compared read.
	entries    []entry
	fileTokens map[string]int
	framed     bool
	reads      map[string][][2]int
	fileLines  map[*Result]map[int]string
	// assistants is the reply of each item the draft changes; shedNow the
	// results it sheds and dropped the rounds it takes out of view whole.
	assistants map[int]*replyState
	shedNow    map[[2]int]bool
	dropped    map[int]bool
	// whole are the replies it keeps whole (keepReply), rather than leave
	// a run too short for the engine to reuse (runs.go).
	whole map[int]bool
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
		d.settleRuns()
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
		shedNow: map[[2]int]bool{}, dropped: map[int]bool{}, whole: map[int]bool{},
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

// Headings of the message.
const (
	foldOpening = " To fit the context window, older rounds were folded into the recap below"
	shedOpening = " To fit the context window, older tool results were shed"
	shedHeading = "Shed, each keeping only its first line where it was:"
	// When every result of a round is shed, the round leaves the view
	// whole (dropRounds): the heading says which happened.
	droppedHeading = "Shed with their rounds, which left the view whole:"
	mixedHeading   = "Shed; rounds whose results were all shed left the view whole, the other results keep only their first line where they were:"
)

// heading is the line before the entries: whether the results shed kept
// their first line in place, left the view with their rounds, or both.
func (d *draft) heading() string {
	dropped, kept := false, false
	for _, e := range d.entries {
		if d.dropped[e.item] {
			dropped = true
		} else {
			kept = true
		}
	}
	switch {
	case dropped && kept:
		return mixedHeading
	case dropped:
		return droppedHeading
	}
	return shedHeading
}

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
		b.WriteString(d.heading() + "\n")
		for _, e := range d.writeEntries() {
			b.WriteString(e)
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
			total += d.m.openingTokens(h.Items[k-1].After)
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

// refold builds the draft's fold again with the note round's note.
func (d *draft) refold(note string) {
	f := d.ev.Fold
	d.note = note
	d.ev.Fold = d.m.fold(d.b, f.Upto, f.Keep, d.leaving(f.Upto, f.Keep), note)
	d.dropShortOpenings()
	d.settleRuns()
}
