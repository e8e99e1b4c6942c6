package ctxwin

import (
	"fmt"
	"strings"
)

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
// what the model sees. Its settings are set with Configure and SetWindow,
// and what it learns is saved and restored with State and Restore
// (state.go); H is the history it renders. Not safe for concurrent use.
type Manager struct {
	H *History

	window int // the context window in tokens; 0 when unknown (docs/design.md §3.9); written by SetWindow only
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
	// toCount is what Uncounted listed, for SetCounts.
	toCount []toCount
	// chunkReuse is the n_cache_reuse of the engine's chunk scan, 0 when
	// none runs (SetChunkReuse).
	chunkReuse int
}

// SetChunkReuse records the smallest chunk, in tokens, that the engine's
// chunk scan reuses after a deletion (llama.cpp's n_cache_reuse; 0 when it
// runs none). A fold keeps an event's opening where it deletes only when
// the scan reuses a run that short (foldMarks).
func (m *Manager) SetChunkReuse(tokens int) { m.chunkReuse = max(tokens, 0) }

// NewManager starts a conversation.
func NewManager(h *History, window int) *Manager {
	m := &Manager{H: h, reasoningRounds: 2}
	m.SetWindow(window)
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

// Budget is the current division of the window; ok is false when no
// window is known.
func (m *Manager) Budget() (b Budget, ok bool) {
	if m.window <= 0 {
		return Budget{}, false
	}
	return NewBudget(m.window, m.reserve.Tokens(m.window)), true
}

// Size estimates the next request in tokens, as shed and fold decisions see it.
func (m *Manager) Size() int {
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

// Tokens prices chars bytes as the shed and fold decisions do: carried
// bytes at the learned ratio, new ones at the density of new text.
func (m *Manager) Tokens(chars int, carried bool) int { return m.est.Tokens(chars, carried) }

// MessageTokens prices a message as the next request will count it.
func (m *Manager) MessageTokens(msg Message) int { return m.est.MessageTokens(msg) }

// ToolTokens prices the tool definitions; carried as in Tokens.
func (m *Manager) ToolTokens(tools []ToolSpec, carried bool) int {
	return m.est.ToolTokens(tools, carried)
}

// LearnedRatio is the ratio of the engine's counts to the baseline
// estimate, 1 before any report.
func (m *Manager) LearnedRatio() float64 { return m.est.LearnedRatio() }

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
	b, ok := m.Budget()
	if !ok {
		ev := m.noWindowEvent()
		if ev != nil {
			m.Apply(ev)
			ev.After = m.Size()
		}
		return Plan{Size: m.Size(), Applied: ev}
	}
	m.cutNewest(b, 0)
	size := m.Size()
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

// NoteFits reports whether the note request of a fold on demand fits.
func (m *Manager) NoteFits() bool {
	b, ok := m.Budget()
	return ok && m.noteFits(b)
}

// noteFits reports whether the note request fits the window with room
// for a short answer; a request already too large skips the note round.
func (m *Manager) noteFits(b Budget) bool {
	need := m.Size() + m.est.Tokens(len(NotePrompt)+len(RoleUser), false) + ReplyMargin + AnswerFloor(b.Window, b.Reserve)
	return need <= b.Window
}

// NoteRequest is the note round's messages: the current request plus the
// note prompt, so the engine reuses the cached prefix.
func (m *Manager) NoteRequest() []Message {
	return append(m.H.Messages(), Message{Role: RoleUser, Content: NotePrompt})
}

// NoteMaxTokens caps the note's answer: it leads a recap of at most the
// recap budget.
func (m *Manager) NoteMaxTokens() int {
	b, ok := m.Budget()
	if !ok {
		return 0
	}
	size := m.Size() + m.est.Tokens(len(NotePrompt), false)
	return min(max(b.Recap, AnswerFloor(b.Window, b.Reserve)), MaxTokens(m.window, size, m.outputLimit, m.maxTokensSetting))
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
	b, ok := m.Budget()
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
	prefix, task := m.Floor()
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
	if now := m.Size(); now >= ceil {
		return
	}
	for slack, k := b.Usable-ceil, 0; k < 4; k++ {
		m.cutNewest(b, slack)
		over := m.Size() - ceil
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
	b, known := m.Budget()
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
	b, ok := m.Budget()
	if !ok {
		return nil
	}
	d := m.plan(b, ReasonCompact, note)
	if d == nil {
		return nil
	}
	ev := d.layout()
	m.Apply(ev)
	ev.After = m.Size()
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
// when unknown) teaches the reserve. Add the reply with AddRound.
func (m *Manager) Observe(promptTokens, completionTokens int) {
	m.attribute(promptTokens)
	m.est.Learn(promptTokens, m.lastSentChars)
	if completionTokens > 0 {
		m.reserve.Observe(completionTokens)
	}
}

// LearnOverflow learns from an engine's refusal of the last sent request:
// the prompt tokens it counted (0 if unstated).
func (m *Manager) LearnOverflow(promptTokens int) {
	m.attribute(promptTokens)
	m.est.Learn(promptTokens, m.lastSentChars)
}

// MaxTokens is the max_tokens of the next request. Until an engine has
// reported a prompt's size the estimate prices every byte as new, at up to
// 1.6 characters a token, which can put the fixed prefix alone above a
// small window (max_tokens 1, a reply cut after one token); so until then
// max_tokens is at least the generation reserve, the room the budget holds
// for the reply. It is never below AnswerFloor (but under the model's
// output limit and REIKA_MAX_TOKENS): a request that cannot leave that
// much is not sent (AnswerRoom).
func (m *Manager) MaxTokens() int {
	prompt := m.Size()
	if b, ok := m.Budget(); ok {
		prompt = min(prompt, b.Window-ReplyMargin-AnswerFloor(b.Window, b.Reserve))
		if m.est.Samples == 0 {
			prompt = min(prompt, b.Window-b.Reserve-ReplyMargin)
		}
	}
	return MaxTokens(m.window, prompt, m.outputLimit, m.maxTokensSetting)
}

// AnswerRoom is what the window leaves the next request's answer, in
// tokens (the window less the request; negative when the request is
// over), and the floor it must clear (AnswerFloor). ReplyMargin is not
// taken off: it guards the estimate, and the room is judged only on the
// engine's counts. measured
// says the request's size rests on the engine's counts (a report of a
// request, or its tokenizer's counts), not on the estimate alone, which
// prices new bytes at up to 1.6 characters a token and can put a first
// request over a window it fits. ok is false when no window is known.
func (m *Manager) AnswerRoom() (room, floor int, measured, ok bool) {
	b, ok := m.Budget()
	if !ok {
		return 0, 0, false, false
	}
	return b.Window - m.Size(), AnswerFloor(b.Window, b.Reserve), m.est.Samples > 0 || m.est.Density > 0, true
}

// WindowFor is the smallest window, in steps of 1024 tokens, whose usable
// window (with the reserve this session would hold on it) holds tokens
// twice: the fixed prefix and the task, and as much again for the work.
func (m *Manager) WindowFor(tokens int) int {
	w := 1024
	for 2*tokens > w-m.reserve.Tokens(w) {
		w += 1024
	}
	return w
}

// Chip is the status chip of the next request.
func (m *Manager) Chip() Chip {
	b, ok := m.Budget()
	if !ok {
		return NewChip(m.Size(), nil)
	}
	return NewChip(m.Size(), &b)
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
	b, ok := m.Budget()
	if !ok {
		return nil, false
	}
	if p := m.Prepare(); p.Shrink {
		ev = m.ShrinkToFit()
	}
	return ev, m.Size() <= b.Usable
}

// Floor is what no shrink can remove from a request: the fixed prefix (the
// fixed part and the system message) and the task (the current turn's
// prompt and the results that define it), in tokens.
func (m *Manager) Floor() (prefix, task int) {
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

// Describe names message i of the last rendering, for the debug line.
func (m *Manager) Describe(i int) string {
	h := m.H
	switch o := h.Owner(i); {
	case o == -1:
		return "the system message"
	case o == -2:
		return "the recap"
	case o < 0:
		return fmt.Sprintf("message %d", i)
	default:
		it := h.Items[o]
		// Which message of the item: the reply, a result, or what an event
		// appended after it.
		msg := h.msgs[i]
		first := i
		for first > 0 && h.Owner(first-1) == o {
			first--
		}
		k := i - first
		after := fmt.Sprintf("round %d", it.Round)
		if !it.IsRound() {
			after = fmt.Sprintf("the prompt of turn %d", it.Turn)
		}
		switch {
		case k > 0 && msg.Role == RoleUser && msg.Content == NotePrompt:
			return "the note prompt after " + after
		case k > 0 && IsAside(msg):
			return "the message of the shrink after " + after
		case k > 0 && msg.Role == RoleAssistant:
			return "the note after " + after
		case !it.IsRound():
			return fmt.Sprintf("the prompt of turn %d", it.Turn)
		case k == 0:
			return fmt.Sprintf("the reply of round %d", it.Round)
		case k-1 < len(it.Results):
			r := it.Results[k-1]
			what := strings.TrimSpace(r.Summary)
			if what == "" {
				what = r.Tool
			}
			return fmt.Sprintf("the result of %s in round %d", what, it.Round)
		default:
			return fmt.Sprintf("the notice after round %d", it.Round)
		}
	}
}
