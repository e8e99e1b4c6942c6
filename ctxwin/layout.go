package ctxwin

import "strings"

// The message step of a shrink (pipeline.go): the event (event.go) is the
// deletions the steps before chose, and the one message appended after the
// newest item that carries what the event adds: the recap of a fold, the
// entries of the results shed, and the notice that they can be run again.

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
