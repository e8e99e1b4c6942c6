package ctxwin

// Which results can be shed (docs/design.md §3.7), the first step of a shrink.
//
// Everything the model sees but the current round and what defines the
// task: the results of the rounds in view, oldest first, each with the
// first line it keeps in place and the summary the event's message will
// carry for it; a round's long string arguments; its reasoning. A result
// too small to be worth shedding is left out: one that its first line and
// its summary would not halve (re-running it would cost more than holding
// it).

// unit is one sheddable payload.
type unit struct {
	item, result int // result is an index, ShedReasoning or ShedArguments
	size         int // bytes it shows now
	// head is what a shed result keeps in place (its first line), entry
	// what the event's message says of it.
	head, entry string
	calls       []ToolCall // ShedArguments: the calls cut short
}

// sheddable lists the units of the history, oldest first.
func (m *Manager) sheddable(b Budget) []unit {
	var units []unit
	m.eachOlderRound(func(i int, it *Item) {
		m.eachShedForm(it, outlineBudget(b), func(j int, r *Result, head, entry string) {
			units = append(units, unit{item: i, result: j, size: len(r.Shown()), head: head, entry: entry})
		})
		if it.Calls == nil {
			if calls := cutArguments(it.Assistant.ToolCalls); calls != nil {
				units = append(units, unit{item: i, result: ShedArguments, size: callsChars(it.Assistant.ToolCalls), calls: calls})
			}
		}
		if !it.ReasoningShed && it.Assistant.Reasoning != "" {
			units = append(units, unit{item: i, result: ShedReasoning, size: len(it.Assistant.Reasoning)})
		}
	})
	return units
}

// eachOlderRound calls f with every round in view before the newest item,
// oldest first.
func (m *Manager) eachOlderRound(f func(i int, it *Item)) {
	for i := 0; i < len(m.H.Items)-1; i++ {
		if it := m.H.Items[i]; m.H.InView(i) && it.IsRound() {
			f(i, it)
		}
	}
}

// eachShedForm calls f with every result of it that may be shed (not shed
// already, not the task's) and has a shed form, its kept head and the
// entry the event's message gives it, within outline budget bytes.
func (m *Manager) eachShedForm(it *Item, budget int, f func(j int, r *Result, head, entry string)) {
	for j, r := range it.Results {
		if r.Shed || r.Task {
			continue
		}
		if head, entry, ok := shedEntry(it.Round, r, m.outline, budget); ok {
			f(j, r, head, entry)
		}
	}
}

// outlineBudget is what a shed read's outline may take, in bytes: four
// hundredths of the usable window (about a hundredth in tokens), within
// 300–4000.
func outlineBudget(b Budget) int {
	return min(max(b.Usable*4/100, 300), 4000)
}

func callsChars(calls []ToolCall) int {
	n := 0
	for _, c := range calls {
		n += len(c.ID) + len(c.Name) + len(c.Arguments)
	}
	return n
}
