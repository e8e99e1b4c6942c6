package ctxwin

import (
	"slices"
	"strings"
	"testing"
)

// foldDraft is a draft of m over the shed target that folds all but the
// newest keep items, after shedding the reasoning of the rounds in cut.
func foldDraft(t *testing.T, m *Manager, note string, keep int, cut ...int) *draft {
	t.Helper()
	d := draftOf(t, m, ReasonShedPoint, note)
	for _, round := range cut {
		d.shed(unit{item: itemOf(m, round), result: ShedReasoning})
	}
	d.b.ShedTarget = d.total - 1
	d.b.FoldKeeps = newestCost(d, keep)
	stepFold(d)
	if d.ev.Fold == nil {
		t.Fatal("no fold")
	}
	return d
}

// TestStepRecap: the recap step writes the fold's recap of what it takes
// out of view, led by the note, within the recap budget, and prices it;
// without a fold it writes nothing.
func TestStepRecap(t *testing.T) {
	small := 30
	rounds := []rd{{reads: []int{small}}, {reads: []int{small}}, {turn: true, reads: []int{small}}, {reads: []int{small}}, {reads: []int{small}}}
	tests := []struct {
		name   string
		note   string
		budget int // the recap budget in tokens, 0 for the window's
		want   []string
		not    []string
	}{
		{"led by the note", "NOTE: the parser is done", 0,
			[]string{"Your note above", "src/r1_0.go: read lines 1-30", "src/r3_0.go", "Earlier requests", "TASK 1: explain the parser"},
			[]string{"src/r2_0.go"}}, // round 2 stays in view, before the prompt of turn 2 (widen)
		{"without a note", "", 0,
			[]string{"src/r1_0.go: read lines 1-30", "TASK 1: explain the parser"}, []string{"Your note above"}},
		{"within its budget", "NOTE", 60,
			[]string{"Your note above"}, []string{"src/r1_0.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := history(24000, rounds...)
			d := foldDraft(t, m, tt.note, 2)
			if tt.budget > 0 {
				d.b.Recap = tt.budget
			}
			stepRecap(d)
			rc := d.ev.Fold.Recap
			if rc == nil {
				t.Fatal("no recap")
			}
			recapHolds(t, rc, tt.want, tt.not)
			if rc.Note != tt.note {
				t.Errorf("the recap's note is %q, want %q", rc.Note, tt.note)
			}
			if got := m.est.Tokens(len(rc.Text), false); d.ev.Fold.RecapTokens != got {
				t.Errorf("the recap is priced at %d tokens, its text costs %d", d.ev.Fold.RecapTokens, got)
			}
		})
	}
	t.Run("no fold, no recap", func(t *testing.T) {
		d := draftOf(t, history(24000, rounds...), ReasonShedPoint, "NOTE")
		stepRecap(d)
		if d.ev.Fold != nil {
			t.Errorf("the recap step made a fold: %+v", d.ev.Fold)
		}
	})
}

// TestStepNote: the note taken up after the plan leads the recap as it
// would have led a plan made with it; a shrink without a fold keeps it
// for nothing.
func TestStepNote(t *testing.T) {
	small, large, tiny := 30, 120, 3
	tests := []struct {
		name   string
		rounds []rd
		window int
		fold   bool
	}{
		{"a fold", []rd{{say: 20, reads: []int{tiny}}, {say: 20, reads: []int{tiny}}, {say: 20, reads: []int{tiny}}, {say: 20, reads: []int{tiny}},
			{say: 20, reads: []int{tiny}}, {say: 20, reads: []int{tiny}}, {reads: []int{tiny}}}, 8000, true},
		{"a shed", []rd{{reads: []int{large, tiny}}, {reads: []int{small, tiny}}, {reads: []int{tiny}}}, 8000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := history(tt.window, tt.rounds...)
			b, _ := m.Gauge().Budget()
			later := m.plan(b, ReasonShedPoint, "")
			if later == nil || (later.ev.Fold != nil) != tt.fold {
				t.Fatalf("the plan %+v, want a fold %v", later, tt.fold)
			}
			later.stepNote("NOTE: what was established")
			first := m.plan(b, ReasonShedPoint, "NOTE: what was established")
			if later.note != first.note {
				t.Errorf("the note is %q, want %q", later.note, first.note)
			}
			if !tt.fold {
				return
			}
			if later.ev.Fold.Recap.Text != first.ev.Fold.Recap.Text || later.ev.Fold.RecapTokens != first.ev.Fold.RecapTokens {
				t.Errorf("the recap with the note taken up:\n%s\nwith the note from the start:\n%s", later.ev.Fold.Recap.Text, first.ev.Fold.Recap.Text)
			}
			if !strings.Contains(later.ev.Fold.Recap.Text, "Your note above") {
				t.Errorf("the recap is not led by the note:\n%s", later.ev.Fold.Recap.Text)
			}
		})
	}
}

// TestStepMessage: the message step opens the message with what the event
// did, lists the results shed under a heading that says where they went,
// ends with the notice when it shed any, keeps the note before the message
// of a fold, and prices the request as the event leaves it.
func TestStepMessage(t *testing.T) {
	large, small, tiny := 120, 30, 3
	folds := []rd{{say: 20, reads: []int{tiny}}, {say: 20, reads: []int{tiny}}, {say: 20, reads: []int{tiny}}, {say: 20, reads: []int{tiny}},
		{say: 20, reads: []int{tiny}}, {think: 10, reads: []int{large, tiny}}, {reads: []int{tiny}}}
	tests := []struct {
		name    string
		rounds  []rd
		window  int
		opening string
		heading string
		notice  bool
		note    bool
	}{
		{"shed, first lines kept", []rd{{reads: []int{large, tiny}}, {reads: []int{small, tiny}}, {reads: []int{tiny}}}, 8000,
			shedOpening + ".", shedHeading, true, false},
		{"shed, rounds whole", []rd{{reads: []int{large}}, {reads: []int{large}}, {reads: []int{tiny}}}, 8000,
			shedOpening + ".", droppedHeading, true, false},
		{"shed, both", []rd{{reads: []int{large}}, {reads: []int{large, tiny}}, {reads: []int{tiny}}}, 8000,
			shedOpening + ".", mixedHeading, true, false},
		{"fold", folds[:5], 6000, foldOpening + ".", "", false, true},
		{"fold and shed", folds, 8000, foldOpening + ", and older tool results were shed.", shedHeading, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := history(tt.window, tt.rounds...)
			b, _ := m.Gauge().Budget()
			d := m.plan(b, ReasonShedPoint, "NOTE")
			if d == nil {
				t.Fatal("no shrink")
			}
			stepMessage(d)
			ev := d.ev
			lines := strings.Split(ev.Message, "\n")
			if want := contextMark(m.H.Events+1) + tt.opening; lines[0] != want {
				t.Errorf("the message opens %q, want %q", lines[0], want)
			}
			if got := slices.Contains(lines, tt.heading); tt.heading != "" && !got {
				t.Errorf("the message has no heading %q:\n%s", tt.heading, ev.Message)
			}
			if got := strings.HasSuffix(ev.Message, ShedNotice); got != tt.notice {
				t.Errorf("the message ends with the notice: %v, want %v", got, tt.notice)
			}
			if got := ev.Note == "NOTE"; got != tt.note {
				t.Errorf("the note before the message is %q", ev.Note)
			}
			if (ev.Fold != nil) != strings.Contains(ev.Message, "<recap>") {
				t.Errorf("a fold %v, a recap in the message %v", ev.Fold != nil, strings.Contains(ev.Message, "<recap>"))
			}
			// The request as the event leaves it is what the step priced.
			m.Apply(ev)
			if got := m.Gauge().Size(); got > ev.After+ev.After/50 || got < ev.After-ev.After/50 {
				t.Errorf("the request is %d tokens, the message step priced it at %d", got, ev.After)
			}
		})
	}
}

// TestReuseAfterFold: the shaping after a fold keeps the opening of an
// event's message the fold keeps in view (foldMarks) only when what
// follows it is reusable: a reply the shed cut right after it stays whole
// if that adds at most openingReplyKeep tokens, else the opening goes; and
// a reply cut right after the fold's deletion stays whole within the same
// limit.
func TestReuseAfterFold(t *testing.T) {
	small := 30
	tests := []struct {
		name   string
		reuse  int // the engine's n_cache_reuse
		think  int // lines of reasoning of round 3, the first the fold keeps
		cut    bool
		marks  bool // the opening stays
		cutNow bool // round 3's reasoning is still shed
	}{
		{"a short reply cut after the opening stays whole", 8, 10, true, true, false},
		{"a long one stays cut, and the opening goes", 8, 80, true, false, true},
		{"a reply left whole keeps the opening", 8, 80, false, true, false},
		{"without openings, a short reply cut after the deletion stays whole", 0, 10, true, false, false},
		{"without openings, a long one stays cut", 0, 80, true, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := history(24000, rd{reads: []int{small}}, rd{reads: []int{small}}, rd{think: tt.think, reads: []int{small}},
				rd{reads: []int{small}}, rd{reads: []int{small}})
			m.Setup().ChunkReuse(tt.reuse)
			// An earlier shed's message after round 1.
			m.H.Items[itemOf(m, 1)].After = &Aside{Message: contextMark(1) + " To fit the context window, older tool results were shed.\n- round 0: `x`"}
			m.H.invalidate()
			var cut []int
			if tt.cut {
				cut = []int{3}
			}
			d := foldDraft(t, m, "", 3, cut...)
			if got := names(m, d.leaving(d.ev.Fold.Upto, d.ev.Fold.Keep)); !slices.Equal(got, []string{"r1", "r2"}) {
				t.Fatalf("folded %q, want rounds 1 and 2", got)
			}
			if tt.reuse > 0 && !slices.Equal(d.ev.Fold.Marks, []int{itemOf(m, 1) + 1}) {
				t.Fatalf("the fold keeps openings %v, want round 1's", d.ev.Fold.Marks)
			}
			reuseAfterFold(d)
			if got := len(d.ev.Fold.Marks) > 0; got != tt.marks {
				t.Errorf("the opening stays: %v, want %v", got, tt.marks)
			}
			if got := slices.Contains(changes(d), "3 reasoning"); got != tt.cutNow {
				t.Errorf("round 3's reasoning shed: %v, want %v (changes %q)", got, tt.cutNow, changes(d))
			}
			if d.total > d.b.Usable {
				t.Errorf("the request is %d tokens, over the usable window %d", d.total, d.b.Usable)
			}
		})
	}
}

// TestStalePlanIsPlannedAgain: a plan carries the shrink Prepare planned
// for the history as it was; once the history changed, or another event
// was applied, Shrink plans again rather than apply a stale draft.
func TestStalePlanIsPlannedAgain(t *testing.T) {
	tiny := 3
	folds := []rd{{say: 20, reads: []int{tiny}}, {say: 20, reads: []int{tiny}}, {say: 20, reads: []int{tiny}}, {say: 20, reads: []int{tiny}},
		{say: 20, reads: []int{tiny}}, {say: 20, reads: []int{tiny}}, {reads: []int{tiny}}}
	t.Run("a round added", func(t *testing.T) {
		m := history(6000, folds...)
		p := m.Prepare()
		if !p.Shrink || !p.Fold {
			t.Fatalf("want a fold due, got %+v", p)
		}
		m.H.AddRound(Message{Content: "one more"})
		ev := m.Shrink(p, "")
		if ev == nil || ev.At != len(m.H.Items)-1 {
			t.Fatalf("the shrink appends its message after item %v, want the newest, %d", ev, len(m.H.Items)-1)
		}
	})
	t.Run("a fold applied", func(t *testing.T) {
		m := history(6000, folds...)
		p := m.Prepare()
		done := m.Compact("")
		if done == nil {
			t.Fatal("nothing folded on demand")
		}
		if ev := m.Shrink(p, ""); ev != nil && ev.Fold != nil && ev.Fold.Upto <= done.Fold.Upto {
			t.Fatalf("the shrink folded up to item %d again, after a fold up to %d", ev.Fold.Upto, done.Fold.Upto)
		}
	})
	t.Run("a shed applied", func(t *testing.T) {
		m := history(8000, rd{reads: []int{120, tiny}}, rd{reads: []int{30, tiny}}, rd{reads: []int{tiny}})
		p := m.Prepare()
		if !p.Shrink || p.Fold {
			t.Fatalf("want a shed due, got %+v", p)
		}
		done := m.ShrinkToFit()
		if done == nil || done.Fold != nil {
			t.Fatalf("want a shed, got %+v", done)
		}
		ev := m.Shrink(p, "")
		for _, c := range shedResults(ev) {
			if slices.Contains(shedResults(done), c) {
				t.Fatalf("result %v was shed twice", c)
			}
		}
	})
	t.Run("a plan carried out once", func(t *testing.T) {
		m := history(6000, folds...)
		p := m.Prepare()
		first := m.Shrink(p, "NOTE")
		if first == nil || first.Fold == nil {
			t.Fatalf("no fold: %+v", first)
		}
		if again := m.Shrink(p, "NOTE"); again != nil && again.Fold != nil && again.Fold.Upto <= first.Fold.Upto {
			t.Fatalf("the plan was carried out twice: a fold up to item %d after one up to %d", again.Fold.Upto, first.Fold.Upto)
		}
	})
	t.Run("the fresh plan is carried out", func(t *testing.T) {
		m := history(6000, folds...)
		p := m.Prepare()
		want := p.planned.d
		ev := m.Shrink(p, "NOTE")
		if ev != want.ev {
			t.Fatal("Shrink planned again instead of carrying out the plan")
		}
	})
}

// shedResults lists the results an event sheds, as item and index.
func shedResults(ev *Event) [][2]int {
	var out [][2]int
	if ev == nil {
		return nil
	}
	for _, c := range ev.Shed {
		if c.Result >= 0 {
			out = append(out, [2]int{c.Item, c.Result})
		}
	}
	return out
}

// TestPipelineOrder: the plan runs the seed's steps in the seed's order,
// with the chunk-reuse shaping after each step that deletes; moving the
// shaping after the fold changes the fold's decisions (the traces of
// TestTraceUnchanged and the bench's committed figures both change).
func TestPipelineOrder(t *testing.T) {
	var got []string
	for _, s := range planSteps {
		got = append(got, s.name)
	}
	want := []string{"shed", "reuse after the shed", "fold", "recap", "reuse after the fold"}
	if !slices.Equal(got, want) {
		t.Errorf("the plan's steps are %q, want %q", got, want)
	}
	got = got[:0]
	for _, s := range afterNoteSteps {
		got = append(got, s.name)
	}
	if want := []string{"fold's openings", "recap", "reuse after the fold"}; !slices.Equal(got, want) {
		t.Errorf("the steps after the note are %q, want %q", got, want)
	}
}
