package ctxwin

// With no known window (docs/design.md §3.9) nothing is shed, cut or folded
// against a budget; instead, every round, the results of older rounds
// collapse as a shed would collapse them, and reasoning older than
// ReasoningRounds rounds is dropped. The collapse is shaped as a shed is
// (event.go): each result keeps its first line in place and one message
// after the newest round carries their entries. No fold ever absorbs these
// messages, so each stays where it was appended and carries only what its
// round collapsed: a round costs what it adds, on any engine that reuses
// chunks of its cache, and on one that reuses only a prefix it costs the
// round before it, where the collapsed results were.

// noWindowBudget is the outline budget of a collapsed read.
const noWindowBudget = 1200

// noWindowEvent collapses, without a known window, every older result and
// drops reasoning older than ReasoningRounds rounds.
func (m *Manager) noWindowEvent() *Event {
	h := m.H
	last := len(h.Items) - 1
	d := &draft{m: m, ev: &Event{Reason: ReasonNoWindow, Round: h.Rounds(), At: last}, prices: prices{costs: make([]int, len(h.Items))},
		replies: replies{shedNow: map[[2]int]bool{}}}
	newest := h.Rounds()
	m.eachOlderRound(func(i int, it *Item) {
		m.eachShedForm(it, noWindowBudget, func(j int, r *Result, head, entry string) {
			d.ev.Shed = append(d.ev.Shed, ShedChange{Item: i, Result: j, View: head, Entry: entry})
			d.entries = append(d.entries, newEntry(i, j, r, entry))
			d.shedNow[[2]int{i, j}] = true
		})
		if !it.ReasoningShed && it.Assistant.Reasoning != "" && newest-it.Round >= m.reasoningRounds {
			d.ev.Shed = append(d.ev.Shed, ShedChange{Item: i, Result: ShedReasoning})
		}
	})
	if len(d.ev.Shed) == 0 {
		return nil
	}
	d.ev.Before = m.requestSize()
	if len(d.entries) == 0 {
		return d.ev // reasoning only: nothing to say
	}
	return d.layout()
}
