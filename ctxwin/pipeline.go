package ctxwin

// A shrink is a pipeline of steps in the seed's words (docs/design.md
// §3.6–3.8), each taking the draft (draft.go) as the steps before left it
// and leaving it for the next:
//
//	cut      the newest round's results to the room left (cut.go): Prepare,
//	         before the request is priced; again after the event (recut)
//	note     whether the note round runs first (Plan.Note), and the note,
//	         which leads the recap (stepNote)
//	shed     oldest first, large payloads before small, down to the shed
//	         target (stepShed, shed.go)
//	fold     the oldest rounds, when shedding is not enough (stepFold,
//	         fold.go)
//	recap    what the fold takes out of view, led by the note (stepRecap,
//	         recap.go)
//	message  the one message the event appends (stepMessage, layout.go)
//
// After each step that deletes, the chunk-reuse shaping (runs.go) keeps
// what the event keeps between its deletions long enough for llama.cpp's
// chunk scan to reuse: reuseAfterShed after the shed, reuseAfterFold after
// the fold. It is a stage of its own, but it runs where it does rather
// than once at the end: what reuseAfterShed keeps whole is priced in the
// request the fold step then measures against the shed target and draws
// its boundary in, so running it later would fold otherwise.
//
// Prepare plans with no note, through the fold's shaping (planSteps). The
// shrink after the note round takes the plan up with the note (stepNote,
// afterNoteSteps): the note changes what the event carries, not what must
// go.

// step is one step of a shrink.
type step struct {
	name string
	run  func(d *draft)
}

// planSteps plan a shrink, in order.
var planSteps = []step{
	{"shed", stepShed},
	{"reuse after the shed", reuseAfterShed},
	{"fold", stepFold},
	{"recap", stepRecap},
	{"reuse after the fold", reuseAfterFold},
}

// afterNoteSteps take up a planned fold with the note round's note: the
// fold's kept openings are chosen again, its recap is led by the note, and
// the runs it leaves are settled again.
var afterNoteSteps = []step{
	{"fold's openings", stepFoldMarks},
	{"recap", stepRecap},
	{"reuse after the fold", reuseAfterFold},
}

// run runs steps on the draft, in order.
func (d *draft) run(steps []step) {
	for _, s := range steps {
		s.run(d)
	}
}

// plan computes a shrink without applying it, through planSteps. It
// returns nil when there is nothing to do.
func (m *Manager) plan(b Budget, reason, note string) *draft {
	d := m.newDraft(b, reason, note)
	d.run(planSteps)
	if len(d.ev.Shed) == 0 && d.ev.Fold == nil {
		return nil
	}
	return d
}

// stepNote takes the note round's note into a plan made before it.
func (d *draft) stepNote(note string) {
	d.note = note
	if d.ev.Fold != nil {
		d.run(afterNoteSteps)
	}
}

// stepShed sheds down to the shed target (shed.go); a fold on demand
// sheds nothing.
func stepShed(d *draft) {
	if d.ev.Reason == ReasonCompact {
		return
	}
	d.shedTo(d.m.sheddable(d.b), d.b.ShedTarget)
	d.dropRounds()
}

// stepFold folds when shedding left the request over the shed target, or
// on demand (fold.go).
func stepFold(d *draft) {
	if d.ev.Reason == ReasonCompact || d.total > d.b.ShedTarget {
		d.decideFold()
	}
}

// stepFoldMarks chooses again the openings the fold keeps (foldMarks).
func stepFoldMarks(d *draft) {
	if f := d.ev.Fold; f != nil {
		f.Marks = d.m.foldMarks(f.Upto, f.Keep)
	}
}

// stepRecap writes the fold's recap, led by the note (recap.go).
func stepRecap(d *draft) {
	if f := d.ev.Fold; f != nil {
		f.Recap, f.RecapTokens = d.m.recap(d.b, f.Upto, f.Keep, d.leaving(f.Upto, f.Keep), d.note)
	}
}

// stepMessage writes the event's message (layout.go).
func stepMessage(d *draft) { d.layout() }

// reuseAfterShed keeps whole the replies the shed cut right after a
// deletion (guardRuns); a fold on demand shed nothing.
func reuseAfterShed(d *draft) {
	if d.ev.Reason != ReasonCompact {
		d.guardRuns()
	}
}

// reuseAfterFold settles the openings the fold keeps and the runs it
// leaves (dropShortOpenings, settleRuns); nothing without a fold.
func reuseAfterFold(d *draft) {
	d.dropShortOpenings()
	d.settleRuns()
}
