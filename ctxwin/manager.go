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

// ShedNotice tells the model, after a shed, that results are gone.
const ShedNotice = "[context] To fit the context window, older tool results were shed to one-line summaries (marked [shed]). " +
	"Their full content is gone from view; run the tool again if you need one in full."

// Manager holds a conversation's history and decides, request by request,
// what the model sees. Its exported fields are its state: persist them and
// a restored Manager makes the same decisions. Not safe for concurrent use.
type Manager struct {
	H *History `json:"history"`
	// Window is the context window in tokens; 0 when unknown (§3.9).
	Window int `json:"window"`
	// OutputLimit is the model's output limit (catalog), 0 when unknown.
	OutputLimit int `json:"outputLimit,omitempty"`
	// MaxTokensSetting is REIKA_MAX_TOKENS, 0 when unset.
	MaxTokensSetting int `json:"maxTokensSetting,omitempty"`
	// ReasoningRounds is how many rounds keep their reasoning without a
	// known window.
	ReasoningRounds int       `json:"reasoningRounds"`
	Est             Estimator `json:"estimator"`
	Reserve         Reserve   `json:"reserve"`

	// Progress is the thrash guard's view of the shrinks (thrash.go).
	Progress Progress `json:"progress,omitzero"`

	// Outline gives a shed read its outline. Not persisted: set it again.
	Outline Outliner `json:"-"`

	// planned is the shrink Prepare planned, carried out by Shrink, for a
	// history of plannedItems items with plannedFolded folded.
	planned                     *Event
	plannedItems, plannedFolded int

	lastSentChars int
	// toCount is what Uncounted listed, for SetCounts.
	toCount []toCount
}

// NewManager starts a conversation.
func NewManager(h *History, window int) *Manager {
	m := &Manager{H: h, Window: window, ReasoningRounds: 2}
	h.est = &m.Est
	return m
}

// Restored re-attaches a Manager decoded from its persisted state. Every
// message of the restored history counts as carried: the learned ratio
// prices it.
func (m *Manager) Restored() {
	m.H.est = &m.Est
	m.H.invalidate()
	m.H.Messages()
	m.H.markSent()
}

// Budget is the current division of the window; ok is false when no
// window is known.
func (m *Manager) Budget() (b Budget, ok bool) {
	if m.Window <= 0 {
		return Budget{}, false
	}
	return NewBudget(m.Window, m.Reserve.Tokens(m.Window)), true
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
	return m.fixedTokens() + h.sumCounted + m.Est.Tokens(h.sumCarried, true) + m.Est.Tokens(fresh, false) +
		h.uncounted*m.Est.overhead()
}

// Plan is what the next request needs before it can be sent.
type Plan struct {
	// Size is the estimated request size after any cut.
	Size int
	// Shrink says the request crossed the shed point.
	Shrink bool
	// Fold says the shrink will fold; Note that the note round should run
	// first (it is skipped when the request leaves no room to answer).
	Fold bool
	Note bool
	// Applied is a change Prepare made itself: without a known window the
	// older results collapse every round. Persist it like a shrink.
	Applied *Event
}

// Prepare readies the next request: it cuts the newest round's results to
// the room left below the usable window, and without a known window it
// collapses older results. It then says whether a shrink is due.
func (m *Manager) Prepare() Plan {
	m.planned = nil
	b, ok := m.Budget()
	if !ok {
		ev := m.noWindowEvent()
		if ev != nil {
			m.Apply(ev)
			ev.After = m.Size()
		}
		return Plan{Size: m.Size(), Applied: ev}
	}
	m.cutNewest(b)
	size := m.Size()
	p := Plan{Size: size}
	if size <= b.ShedPoint {
		return p
	}
	p.Shrink = true
	ev := m.plan(b, ReasonShedPoint, "")
	m.planned, m.plannedItems, m.plannedFolded = ev, len(m.H.Items), m.H.Folded
	p.Fold = ev != nil && ev.Fold != nil
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
	need := m.Size() + m.Est.Tokens(len(NotePrompt)+len(RoleUser), false) + ReplyMargin + min(b.Recap, minNoteTokens)
	return need <= b.Window
}

// minNoteTokens is the least answer room a note round needs.
const minNoteTokens = 256

// NoteRequest is the note round's messages: the current request plus the
// note prompt, so the engine reuses the cached prefix.
func (m *Manager) NoteRequest() []Message {
	return append(m.H.Messages(), Message{Role: RoleUser, Content: NotePrompt})
}

// NoteMaxTokens caps the note's answer: it goes into a recap of at most
// the recap budget.
func (m *Manager) NoteMaxTokens() int {
	b, ok := m.Budget()
	if !ok {
		return 0
	}
	size := m.Size() + m.Est.Tokens(len(NotePrompt), false)
	return min(b.Recap, MaxTokens(m.Window, size, m.OutputLimit, m.MaxTokensSetting))
}

// Shrink sheds and, when shedding is not enough, folds, down to the shed
// target, in one event (one cache invalidation). note opens the recap of a
// fold ("" when the note round failed or was skipped). reason is
// ReasonShedPoint or ReasonOverflow. It returns nil when nothing could be
// shed or folded.
func (m *Manager) Shrink(note, reason string) *Event {
	b, ok := m.Budget()
	if !ok {
		return nil
	}
	// A shrink at the shed point carries out what Prepare planned: the
	// note round in between changes what is carried, not what must go.
	ev := m.planned
	m.planned = nil
	if ev != nil && (len(m.H.Items) != m.plannedItems || m.H.Folded != m.plannedFolded) {
		ev = nil // the history changed since: plan again
	}
	if reason != ReasonShedPoint || ev == nil {
		ev = m.plan(b, reason, note)
	} else if ev.Fold != nil {
		before := ev.Fold.RecapTokens
		ev.Fold = m.fold(b, ev.Fold.Upto, note)
		ev.After += ev.Fold.RecapTokens - before
	}
	if ev == nil {
		return nil
	}
	folded := m.H.Folded
	m.Apply(ev)
	m.Progress.judge(m.H, ev, folded, b)
	return ev
}

// StartTurn opens a turn; a new turn clears the thrash guard.
func (m *Manager) StartTurn(prompt string) *Item {
	m.Progress = Progress{}
	return m.H.StartTurn(prompt)
}

// AddRound appends the model's reply as a new round. completionTokens is
// what the engine counted for it (0 when it reported nothing): the reply
// then costs that in the next request, with the template's overhead.
func (m *Manager) AddRound(reply Message, completionTokens int) *Item {
	if completionTokens > 0 {
		shown := reply
		shown.Role = RoleAssistant
		m.Est.provisional(shown, completionTokens+m.Est.overhead())
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
	if m.foldBoundary(b, m.itemCosts()) <= m.H.Folded {
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
	costs := m.itemCosts()
	upto := m.foldBoundary(b, costs)
	if upto <= m.H.Folded {
		return nil
	}
	before := m.Size()
	ev := &Event{Reason: ReasonCompact, Round: m.H.Rounds(), Before: before}
	ev.Fold = m.fold(b, upto, note)
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
	m.Est.Learn(promptTokens, m.lastSentChars)
	if completionTokens > 0 {
		m.Reserve.Observe(completionTokens)
	}
}

// LearnOverflow learns from an engine's refusal of the last sent request:
// the prompt tokens it counted (0 if unstated).
func (m *Manager) LearnOverflow(promptTokens int) {
	m.attribute(promptTokens)
	m.Est.Learn(promptTokens, m.lastSentChars)
}

// MaxTokens is the max_tokens of the next request. Until an engine has
// reported a prompt's size the estimate prices every byte as new, at up to
// 1.6 characters a token, which can put the fixed prefix alone above a
// small window (max_tokens 1, a reply cut after one token); so until then
// max_tokens is at least the generation reserve, the room the budget holds
// for the reply.
func (m *Manager) MaxTokens() int {
	n := MaxTokens(m.Window, m.Size(), m.OutputLimit, m.MaxTokensSetting)
	if b, ok := m.Budget(); ok && m.Est.Samples == 0 {
		n = max(n, MaxTokens(m.Window, m.Window-b.Reserve-ReplyMargin, m.OutputLimit, m.MaxTokensSetting))
	}
	return n
}

// Chip is the status chip of the next request.
func (m *Manager) Chip() Chip {
	b, ok := m.Budget()
	if !ok {
		return NewChip(m.Size(), nil)
	}
	return NewChip(m.Size(), &b)
}

// Event is one shrink: what was shed, what folded, and the notice to the
// model. Apply replays it, so a persisted event log restores the history
// as the model last saw it.
type Event struct {
	Reason string       `json:"reason"`
	Round  int          `json:"round"`
	Shed   []ShedChange `json:"shed,omitempty"`
	Fold   *FoldChange  `json:"fold,omitempty"`
	Notice string       `json:"notice,omitempty"`
	// Before and After are the estimated request sizes in tokens.
	Before int `json:"before"`
	After  int `json:"after"`
}

// What a ShedChange changes besides a result.
const (
	ShedReasoning = -1
	ShedArguments = -2
)

// ShedChange is one shed: a result collapsed to View, a round's reasoning
// dropped, or its long tool-call arguments replaced by Calls.
type ShedChange struct {
	Item   int        `json:"item"`
	Result int        `json:"result"`
	View   string     `json:"view,omitempty"`
	Calls  []ToolCall `json:"calls,omitempty"`
}

// FoldChange is a fold: items before Upto are replaced by Recap.
type FoldChange struct {
	Upto        int    `json:"upto"`
	Rounds      int    `json:"rounds"`
	Recap       *Recap `json:"recap"`
	RecapTokens int    `json:"recapTokens"`
}

// Apply makes an event's changes to the history.
func (m *Manager) Apply(ev *Event) {
	m.planned = nil
	h := m.H
	for _, c := range ev.Shed {
		if c.Item < 0 || c.Item >= len(h.Items) {
			continue
		}
		it := h.Items[c.Item]
		switch {
		case c.Result == ShedReasoning:
			it.ReasoningShed = true
		case c.Result == ShedArguments:
			it.Calls = c.Calls
		case c.Result >= 0 && c.Result < len(it.Results):
			r := it.Results[c.Result]
			r.Shed, r.Cut, r.View = true, false, c.View
			r.Source = nil
		}
	}
	if ev.Fold != nil {
		h.Folded = ev.Fold.Upto
		h.Recap = ev.Fold.Recap
	}
	if ev.Notice != "" {
		if last := h.Last(); last != nil {
			last.Notice = ev.Notice
		}
	}
	h.invalidate()
}

// itemCosts prices each item's messages as the cache stands.
func (m *Manager) itemCosts() []int {
	costs, _ := m.costs()
	return costs
}

// costs prices each item's messages, and the fixed prefix (the tool
// definitions and the system message) apart.
func (m *Manager) costs() (items []int, fixed int) {
	h := m.H
	h.Messages()
	items = make([]int, len(h.Items))
	fixed = m.fixedTokens()
	for i, o := range h.owner {
		c := h.tokens[i]
		if c < 0 {
			c = m.Est.Tokens(h.chars[i], h.carried[i]) + m.Est.overhead()
		}
		switch {
		case o >= 0:
			items[o] += c
		case o == -1:
			fixed += c
		}
	}
	return items, fixed
}

// outlineBudget is what a shed read's outline may take, in bytes: about a
// hundredth of the usable window, within 300–4000.
func outlineBudget(b Budget) int {
	return min(max(b.Usable*4/100, 300), 4000)
}

// unit is one sheddable payload.
type unit struct {
	item, result int
	view         string
	size         int // bytes shown now
}

// plan computes a shrink without applying it: shed oldest first, large
// payloads before small, down to the shed target; then fold if that is not
// enough. It returns nil when there is nothing to do.
func (m *Manager) plan(b Budget, reason, note string) *Event {
	h := m.H
	costs, fixed := m.costs()
	before := m.size()
	total := before
	ev := &Event{Reason: reason, Round: h.Rounds(), Before: before}
	last := len(h.Items) - 1

	var units []unit
	for i := h.Folded; i < last; i++ {
		it := h.Items[i]
		if !it.IsRound() {
			continue
		}
		for j, r := range it.Results {
			if r.Shed || r.Task {
				continue
			}
			if v := ShedView(r, m.Outline, outlineBudget(b)); v != "" {
				units = append(units, unit{item: i, result: j, view: v, size: len(r.Shown())})
			}
		}
		if it.Calls == nil {
			if calls := shedArguments(it.Assistant.ToolCalls); calls != nil {
				units = append(units, unit{item: i, result: ShedArguments, size: callsChars(it.Assistant.ToolCalls)})
			}
		}
		if !it.ReasoningShed && it.Assistant.Reasoning != "" {
			units = append(units, unit{item: i, result: ShedReasoning, size: len(it.Assistant.Reasoning)})
		}
	}
	// Working copies of what changes, to price each step.
	type itemState struct {
		reasoningShed bool
		calls         []ToolCall
	}
	state := map[int]*itemState{}
	stateOf := func(i int) *itemState {
		s, ok := state[i]
		if !ok {
			it := h.Items[i]
			s = &itemState{reasoningShed: it.ReasoningShed, calls: it.Calls}
			state[i] = s
		}
		return s
	}
	assistantCost := func(i int, s *itemState) int {
		a := h.Items[i].Assistant
		if s.reasoningShed {
			a.Reasoning = ""
		}
		if s.calls != nil {
			a.ToolCalls = s.calls
		}
		a.Role = RoleAssistant
		return m.Est.MessageTokens(a)
	}
	currentAssistant := map[int]int{}
	assistantNow := func(i int) int {
		c, ok := currentAssistant[i]
		if !ok {
			c = assistantCost(i, stateOf(i))
			currentAssistant[i] = c
		}
		return c
	}
	apply := func(u unit) {
		it := h.Items[u.item]
		switch u.result {
		case ShedReasoning, ShedArguments:
			s := stateOf(u.item)
			old := assistantNow(u.item)
			if u.result == ShedReasoning {
				if s.reasoningShed {
					return
				}
				s.reasoningShed = true
				ev.Shed = append(ev.Shed, ShedChange{Item: u.item, Result: ShedReasoning})
			} else {
				s.calls = shedArguments(it.Assistant.ToolCalls)
				ev.Shed = append(ev.Shed, ShedChange{Item: u.item, Result: ShedArguments, Calls: s.calls})
			}
			now := assistantCost(u.item, s)
			currentAssistant[u.item] = now
			delta := now - old
			total += delta
			costs[u.item] += delta
		default:
			r := it.Results[u.result]
			old := m.Est.MessageTokens(Message{Role: RoleTool, ToolCallID: r.CallID, Content: r.Shown()})
			now := m.Est.Tokens(len(RoleTool)+len(r.CallID)+len(u.view), false)
			total += now - old
			costs[u.item] += now - old
			ev.Shed = append(ev.Shed, ShedChange{Item: u.item, Result: u.result, View: u.view})
		}
	}
	shedPass := func(large bool) {
		for _, u := range units {
			if total <= b.ShedTarget {
				return
			}
			if (u.size >= LargePayload) != large {
				continue
			}
			apply(u)
			if u.result >= 0 {
				// A shed round's reasoning goes with it.
				if it := h.Items[u.item]; it.Assistant.Reasoning != "" {
					apply(unit{item: u.item, result: ShedReasoning})
				}
			}
		}
	}
	if reason != ReasonCompact {
		shedPass(true)
		shedPass(false)
	}
	if len(ev.Shed) > 0 {
		ev.Notice = ShedNotice
	}
	if total > b.ShedTarget {
		if upto := m.foldBoundary(b, costs); upto > h.Folded {
			// A fold must shrink: the recap replaces the old one and the
			// folded items. Judge it with the longest note the recap
			// keeps, so the note round never runs for a fold that is
			// then called off.
			longest := m.fold(b, upto, strings.Repeat("n", m.Est.CharsFor(b.Recap)*3/10))
			replaced := 0
			for i := h.Folded; i < upto; i++ {
				replaced += costs[i]
			}
			if h.Recap != nil && h.Folded > 0 {
				replaced += m.Est.MessageTokens(Message{Role: RoleUser, Content: h.Recap.Text})
			}
			if longest.RecapTokens < replaced {
				ev.Fold = m.fold(b, upto, note)
			}
		}
		if ev.Fold != nil {
			upto := ev.Fold.Upto
			// Sheds inside the folded items are moot.
			kept := ev.Shed[:0]
			for _, c := range ev.Shed {
				if c.Item >= upto {
					kept = append(kept, c)
				}
			}
			ev.Shed = kept
			if len(ev.Shed) == 0 {
				ev.Notice = ""
			}
			total = fixed + ev.Fold.RecapTokens
			for i := upto; i < len(h.Items); i++ {
				total += costs[i]
			}
		}
	}
	if len(ev.Shed) == 0 && ev.Fold == nil {
		return nil
	}
	if ev.Notice != "" && h.Items[last].Notice != ev.Notice {
		total += m.Est.Tokens(len(RoleUser)+len(ev.Notice), false)
	}
	ev.After = total
	return ev
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

// fold builds the fold of the items before upto.
func (m *Manager) fold(b Budget, upto int, note string) *FoldChange {
	h := m.H
	rc := buildRecap(h.Recap, h.Items[h.Folded:upto], note, h.Turns())
	rc.render(m.Est.CharsFor(b.Recap))
	rounds := 0
	for _, it := range h.Items[h.Folded:upto] {
		if it.IsRound() {
			rounds++
		}
	}
	return &FoldChange{
		Upto:        upto,
		Rounds:      rounds,
		Recap:       rc,
		RecapTokens: m.Est.Tokens(len(rc.Text)+len(RoleUser), false),
	}
}

// noWindowEvent collapses, without a known window, every older result to
// its summary and drops reasoning older than ReasoningRounds rounds.
func (m *Manager) noWindowEvent() *Event {
	h := m.H
	last := len(h.Items) - 1
	ev := &Event{Reason: ReasonNoWindow, Round: h.Rounds()}
	newest := h.Rounds()
	for i := h.Folded; i < last; i++ {
		it := h.Items[i]
		if !it.IsRound() {
			continue
		}
		for j, r := range it.Results {
			if r.Shed || r.Task {
				continue
			}
			if v := ShedView(r, m.Outline, 1200); v != "" {
				ev.Shed = append(ev.Shed, ShedChange{Item: i, Result: j, View: v})
			}
		}
		if !it.ReasoningShed && it.Assistant.Reasoning != "" && newest-it.Round >= m.ReasoningRounds {
			ev.Shed = append(ev.Shed, ShedChange{Item: i, Result: ShedReasoning})
		}
	}
	if len(ev.Shed) == 0 {
		return nil
	}
	ev.Before = m.Size()
	return ev
}

func callsChars(calls []ToolCall) int {
	n := 0
	for _, c := range calls {
		n += len(c.ID) + len(c.Name) + len(c.Arguments)
	}
	return n
}

// cutNewest cuts the newest round's results to the room left below the
// usable window after everything else in the request.
func (m *Manager) cutNewest(b Budget) {
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
		others -= m.Est.MessageTokens(r.message())
	}
	cutResults(last.Results, b.Usable-others-len(last.Results)*m.Est.overhead(), &m.Est)
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
		ev = m.Shrink("", ReasonOverflow)
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
			prefix += m.Est.MessageTokens(h.msgs[i])
		}
	}
	turn := h.Turns()
	for _, it := range h.Items {
		if it.Turn != turn {
			continue
		}
		if !it.IsRound() {
			task += m.Est.MessageTokens(Message{Role: RoleUser, Content: it.Prompt})
		}
		for _, r := range it.Results {
			if r.Task {
				task += m.Est.MessageTokens(r.message())
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
		if !it.IsRound() {
			return fmt.Sprintf("the prompt of turn %d", it.Turn)
		}
		// Which message of the round: the reply, a result or the notice.
		first := i
		for first > 0 && h.Owner(first-1) == o {
			first--
		}
		k := i - first
		switch {
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
