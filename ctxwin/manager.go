package ctxwin

// Shrink reasons.
const (
	ReasonShedPoint = "shed point"
	ReasonOverflow  = "overflow"
	ReasonCompact   = "compact"
	ReasonNoWindow  = "no window"
)

// NotePrompt is the user message of the note round.
const NotePrompt = "The context window is full: older rounds are about to be folded into a short recap, and your reasoning will not survive it. " +
	"Before that happens, write down what you have established so far: facts you found (with file paths and line numbers), " +
	"decisions made, what is done and what remains, and anything you would otherwise need to look up again. " +
	"Be concise and specific. Do not call tools."

// Manager holds a conversation's history and decides, request by request,
// what the model sees. Its settings are set through Setup (setup.go),
// and what it learns is saved and restored with State and Restore
// (state.go); H is the history it renders. Not safe for concurrent use.
//
// A turn goes: StartTurn; then, for each request, Prepare, the note round
// when the plan says so (NoteRound), Shrink(plan, note) when it says a
// shrink is due, Sent, the engine's answer (Observe, AddRound) and the
// results (H.AddResult). Gauge reads the request, Setup sets what the
// manager works with, Prices prices text.
type Manager struct {
	H *History

	window int // the context window in tokens; 0 when unknown (docs/design.md §3.9); written by Setup.Window only
	// settings are the limits of Configure.
	outputLimit, maxTokensSetting, reasoningRounds int
	est                                            Estimator
	reserve                                        Reserve
	progress                                       Progress // the thrash guard (thrash.go)
	outline                                        Outliner

	// plans counts what makes a Plan stale: each Prepare, Apply and
	// Shrink. A Plan carries its count (Plan.planned).
	plans int

	lastSentChars int
	// chunkReuse is the n_cache_reuse of the engine's chunk scan, 0 when
	// none runs (Setup.ChunkReuse).
	chunkReuse int
}

// NewManager starts a conversation.
func NewManager(h *History, window int) *Manager {
	m := &Manager{H: h, reasoningRounds: 2}
	m.Setup().Window(window)
	h.est = &m.est
	return m
}

// Restored makes every message of a history replayed from a session log
// count as carried: the learned ratio prices it.
func (m *Manager) Restored() {
	m.H.est = &m.est
	m.H.invalidate()
	m.H.Messages()
	m.H.markSent()
}

// budget is the current division of the window; ok is false when no
// window is known.
func (m *Manager) budget() (b Budget, ok bool) {
	if m.window <= 0 {
		return Budget{}, false
	}
	return NewBudget(m.window, m.reserve.Tokens(m.window)), true
}

// requestSize estimates the next request in tokens, as shed and fold
// decisions see it.
func (m *Manager) requestSize() int {
	m.H.Messages()
	return m.size()
}

// size prices the cache as it stands: the fixed part, what the engine
// counted, and the estimate of the rest (count.go).
func (m *Manager) size() int {
	h := m.H
	fresh := h.sumChars - h.sumCountedChars - h.sumCarried
	return m.fixedTokens() + h.sumCounted + m.est.Tokens(h.sumCarried, true) + m.est.Tokens(fresh, false) +
		h.uncounted*m.est.overhead()
}

// Plan is what the next request needs before it can be sent, as Prepare
// found it, and the shrink it planned, which Shrink carries out after the
// note round: the note changes what the shrink carries, not what must go.
type Plan struct {
	// Size is the estimated request size after any cut.
	Size int
	// Shrink says the request crossed the shed point: Shrink(plan, note)
	// is due before it is sent.
	Shrink bool
	// Fold says the shrink will fold; Note that the note round should run
	// first (it is skipped when the request leaves no room to answer).
	Fold bool
	Note bool
	// Applied is a change Prepare made itself: without a known window the
	// older results collapse every round. Persist it like a shrink.
	Applied *Event

	planned *planned
}

// planned is the shrink a Plan carries: the draft of the pipeline's
// planSteps (pipeline.go), for a history of items items with folded
// folded, at the manager's count of plans gen.
type planned struct {
	d                  *draft
	items, folded, gen int
}

// Prepare readies the next request: it cuts the newest round's results to
// the room left below the usable window, and without a known window it
// collapses older results. It then says whether a shrink is due, and
// plans it.
func (m *Manager) Prepare() Plan {
	m.plans++
	b, ok := m.budget()
	if !ok {
		ev := m.noWindowEvent()
		if ev != nil {
			m.Apply(ev)
			ev.After = m.requestSize()
		}
		return Plan{Size: m.requestSize(), Applied: ev}
	}
	m.cutNewest(b, 0)
	size := m.requestSize()
	p := Plan{Size: size}
	if size <= b.ShedPoint {
		return p
	}
	p.Shrink = true
	d := m.plan(b, ReasonShedPoint, "")
	p.planned = &planned{d: d, items: len(m.H.Items), folded: m.H.Folded, gen: m.plans}
	p.Fold = d != nil && d.ev.Fold != nil
	p.Note = p.Fold && m.noteFits(b)
	return p
}

// NoteRound is the note round's request: the current request plus the
// note prompt, so the engine reuses the cached prefix; the cap of its
// answer, which leads a recap of at most the recap budget; and whether it
// fits the window with room for a short answer (a request already too
// large skips the note round). Fits is false without a known window.
type NoteRound struct {
	Messages  []Message
	MaxTokens int
	Fits      bool
}

// NoteRound is the note round of a fold due now.
func (m *Manager) NoteRound() NoteRound {
	r := NoteRound{Messages: append(m.H.Messages(), Message{Role: RoleUser, Content: NotePrompt})}
	b, ok := m.budget()
	if !ok {
		return r
	}
	size := m.requestSize() + m.est.Tokens(len(NotePrompt), false)
	r.MaxTokens = min(max(b.Recap, AnswerFloor(b.Window, b.Reserve)), MaxTokens(m.window, size, m.outputLimit, m.maxTokensSetting))
	r.Fits = m.noteFits(b)
	return r
}

// noteFits reports whether the note request fits the window with room
// for a short answer; a request already too large skips the note round.
func (m *Manager) noteFits(b Budget) bool {
	need := m.requestSize() + m.est.Tokens(len(NotePrompt)+len(RoleUser), false) + ReplyMargin + AnswerFloor(b.Window, b.Reserve)
	return need <= b.Window
}

// Shrink carries out the shrink Prepare planned (p.Shrink): it sheds and,
// when shedding is not enough, folds, down to the shed target, in one
// event (event.go). note leads the recap of a fold ("" when the note round
// failed or was skipped). A plan made stale by a later Prepare, an Apply,
// a Shrink or a change to the history is planned again. It returns nil
// when nothing could be shed or folded.
func (m *Manager) Shrink(p Plan, note string) *Event {
	var d *draft
	if pl := p.planned; pl != nil && pl.gen == m.plans && pl.items == len(m.H.Items) && pl.folded == m.H.Folded {
		d = pl.d
	}
	return m.shrink(d, note, ReasonShedPoint)
}

// ShrinkToFit sheds and folds down to the shed target without a note: after
// an engine refused a request, or when a request leaves no room to answer
// (ReasonOverflow). It returns nil when nothing could be shed or folded.
func (m *Manager) ShrinkToFit() *Event { return m.shrink(nil, "", ReasonOverflow) }

// shrink carries out the draft d with the note round's note (stepNote), or
// plans one for reason when d is nil, then writes its message, applies it
// and cuts the newest round again to the room it made.
func (m *Manager) shrink(d *draft, note, reason string) *Event {
	b, ok := m.budget()
	if !ok {
		return nil
	}
	m.plans++
	if d == nil {
		d = m.plan(b, reason, note)
	} else {
		d.stepNote(note)
	}
	if d == nil {
		return nil
	}
	ev := d.layout()
	folded := m.H.Folded
	m.Apply(ev)
	m.recut(b, ev)
	prefix, task := m.floor()
	m.progress.judge(m.H, ev, folded, b, prefix+task)
	return ev
}

// recut cuts the newest round's results again, to the room below the
// shed point that the event left: they were cut to the room before it,
// and a new result takes the room left after everything else (the seed),
// which the event has just made larger. The round has not been sent (but
// in the note round, which the event follows), so this costs the engine
// nothing more: the same event, the same invalidation. What changed goes
// into the event (Recut), so its replay gives the same views.
func (m *Manager) recut(b Budget, ev *Event) {
	last := m.H.Last()
	if last == nil || !last.IsRound() || len(last.Results) == 0 {
		return
	}
	before := make([]string, len(last.Results))
	for j, r := range last.Results {
		before[j] = r.Shown()
	}
	// The results take the room up to the shed point, not the usable
	// window: the event brought the request under the shed point, and a cut
	// that filled the usable window would have the very next request shed
	// again (and the chip read over 100% right after a shed). That still
	// leaves the newest read a quarter of the usable window and more: the
	// event sheds down to the shed target, 0.63 of it, with the results as
	// they were cut before. An event that left the request over the shed
	// point leaves the results as they were: they never get less room.
	//
	// The cut prices each result's view, not its whole message (role, id),
	// and keeps whole lines: take what that leaves over, and more each
	// time, off the room, three times at most. (It stays over when the rest
	// of the request alone is: no cut can help then.)
	ceil := b.ShedPoint
	if now := m.requestSize(); now >= ceil {
		return
	}
	for slack, k := b.Usable-ceil, 0; k < 4; k++ {
		m.cutNewest(b, slack)
		over := m.requestSize() - ceil
		if over <= 0 {
			break
		}
		slack += over + minCutTokens/4 + k*over
	}
	at := len(m.H.Items) - 1
	for j, r := range last.Results {
		if r.Shown() == before[j] {
			continue
		}
		c := ShedChange{Item: at, Result: j}
		if r.Cut {
			c.View = r.View
		}
		ev.Recut = append(ev.Recut, c)
	}
}

// StartTurn opens a turn; a new turn clears the thrash guard.
func (m *Manager) StartTurn(prompt string) *Item {
	m.progress = Progress{}
	return m.H.StartTurn(prompt)
}

// AddRound appends the model's reply as a new round. completionTokens is
// what the engine counted for it (0 when it reported nothing): the reply
// then costs that in the next request, with the template's overhead.
func (m *Manager) AddRound(reply Message, completionTokens int) *Item {
	if completionTokens > 0 {
		shown := reply
		shown.Role = RoleAssistant
		m.est.provisional(shown, completionTokens+m.est.overhead())
	}
	return m.H.AddRound(reply)
}

// CanCompact reports whether a fold on demand would fold anything, and
// the message to show when it would not.
func (m *Manager) CanCompact() (ok bool, why string) {
	b, known := m.budget()
	if !known {
		return false, "Nothing to fold against: the context window is unknown (set contextWindow or REIKA_CONTEXT_WINDOW)"
	}
	if m.plan(b, ReasonCompact, "") == nil {
		return false, "Nothing to fold"
	}
	return true, ""
}

// Compact folds on demand: the oldest items fold into the recap, keeping
// the newest that fit in the fold keeps. It returns nil when nothing folds.
func (m *Manager) Compact(note string) *Event {
	b, ok := m.budget()
	if !ok {
		return nil
	}
	d := m.plan(b, ReasonCompact, note)
	if d == nil {
		return nil
	}
	ev := d.layout()
	m.Apply(ev)
	ev.After = m.requestSize()
	return ev
}

// Sent records that the current request was sent: its bytes are carried,
// and how it was priced is kept for the engine's report of it.
func (m *Manager) Sent() {
	m.H.Messages()
	m.lastSentChars = m.H.sumChars + ToolChars(m.H.Tools)
	m.snapshot()
	m.H.markSent()
}

// Observe learns from the engine's report of the last sent request:
// promptTokens (0 when the engine reported none) are shared out over the
// request's messages (count.go) and teach the ratio; the completion size (0
// when unknown) teaches the reserve. Add the reply with AddRound. After an
// engine's refusal of the request, pass the prompt tokens it counted (0 if
// unstated) and no completion.
func (m *Manager) Observe(promptTokens, completionTokens int) {
	m.attribute(promptTokens)
	m.est.Learn(promptTokens, m.lastSentChars)
	if completionTokens > 0 {
		m.reserve.Observe(completionTokens)
	}
}

// costs prices each item's messages (with what events appended after it),
// and the fixed prefix (the tool definitions and the system message, and a
// recap rendered first) apart.
func (m *Manager) costs() (items []int, fixed int) {
	h := m.H
	h.Messages()
	items = make([]int, len(h.Items))
	fixed = m.fixedTokens()
	for i, o := range h.owner {
		c := h.tokens[i]
		if c < 0 {
			c = m.est.Tokens(h.chars[i], h.carried[i]) + m.est.overhead()
		}
		switch {
		case o >= 0:
			items[o] += c
		case o == -1, o == -2: // the system message; a recap rendered first
			fixed += c
		}
	}
	return items, fixed
}

// cutNewest cuts the newest round's results to the room left below the
// usable window after everything else in the request, less slack tokens.
func (m *Manager) cutNewest(b Budget, slack int) {
	last := m.H.Last()
	if last == nil || !last.IsRound() || len(last.Results) == 0 {
		return
	}
	h := m.H
	h.Messages()
	others := m.size()
	// Take the results out: they are priced anew by the cut, each with the
	// template's overhead.
	for _, r := range last.Results {
		others -= m.est.MessageTokens(r.message())
	}
	cutResults(last.Results, b.Usable-others-len(last.Results)*m.est.overhead()-slack, &m.est)
}

// Refit makes the next request fit after the engine refused the last one
// (an overflow; the engine's window and count already learned): it cuts
// the newest round's results to the room below the usable window, and sheds
// and folds down to the shed target when the request is over the shed
// point, without a note. It returns the shrink (nil when none was needed or
// possible) and whether the request now leaves the reserve free.
func (m *Manager) Refit() (ev *Event, fits bool) {
	b, ok := m.budget()
	if !ok {
		return nil, false
	}
	if p := m.Prepare(); p.Shrink {
		ev = m.ShrinkToFit()
	}
	return ev, m.requestSize() <= b.Usable
}

// floor is what no shrink can remove from a request: the fixed prefix (the
// fixed part and the system message) and the task (the current turn's
// prompt and the results that define it), in tokens.
func (m *Manager) floor() (prefix, task int) {
	h := m.H
	h.Messages()
	prefix = m.fixedTokens()
	for i, o := range h.owner {
		if o == -1 {
			prefix += m.est.MessageTokens(h.msgs[i])
		}
	}
	turn := h.Turns()
	for _, it := range h.Items {
		if it.Turn != turn {
			continue
		}
		if !it.IsRound() {
			task += m.est.MessageTokens(Message{Role: RoleUser, Content: it.Prompt})
		}
		for _, r := range it.Results {
			if r.Task {
				task += m.est.MessageTokens(r.message())
			}
		}
	}
	return prefix, task
}
