package ctxwin

// The state a shrink's steps pass on (pipeline.go): the event being made,
// and what each step leaves for the next: the prices of the request as the
// steps so far leave it, the replies they change, and the entries of the
// message.

// draft is a shrink being planned: the state of its pipeline.
type draft struct {
	m  *Manager
	b  Budget
	ev *Event
	// note is the note round's note that leads a fold's recap (the note
	// step).
	note string
	prices
	replies
	listing
}

// prices are the request as the draft leaves it: costs is each item's
// tokens (what events appended after it included); fixed the tool
// definitions and the system message; total the request's size with the
// message so far.
type prices struct {
	costs        []int
	fixed, total int
}

// replies are the draft's changes to items as a whole: assistants is the
// reply of each item the draft changes; shedNow the results it sheds and
// dropped the rounds it takes out of view whole; whole the replies it
// keeps whole (keepReply), rather than leave a run too short for the
// engine to reuse (runs.go).
type replies struct {
	assistants map[int]*replyState
	shedNow    map[[2]int]bool
	dropped    map[int]bool
	whole      map[int]bool
}

// listing is what the message's entries need (entries.go): the entries of
// the results shed, fileTokens what those with an outline cost as written,
// by file; framed says the message's frame is priced in total. reads are
// the reads of each file in the history, fileLines the lines of the files
// the reads compared read.
type listing struct {
	entries    []entry
	fileTokens map[string]int
	framed     bool
	reads      map[string][][2]int
	fileLines  map[*Result]map[int]string
}

// replyState is a reply as the draft leaves it.
type replyState struct {
	reasoningShed bool
	calls         []ToolCall
	cost          int
}

func (m *Manager) newDraft(b Budget, reason, note string) *draft {
	costs, fixed := m.costs()
	size := m.size()
	return &draft{m: m, b: b, note: note, prices: prices{costs: costs, fixed: fixed, total: size},
		replies: replies{assistants: map[int]*replyState{}, shedNow: map[[2]int]bool{}, dropped: map[int]bool{}, whole: map[int]bool{}},
		ev:      &Event{Reason: reason, Round: m.H.Rounds(), Before: size, At: len(m.H.Items) - 1}}
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

// foldedNow reports whether the draft's fold takes item i out of view.
func (d *draft) foldedNow(i int) bool {
	f := d.ev.Fold
	return f != nil && i < f.Upto && !contains(f.Keep, i)
}
