package ctxwin

import (
	"encoding/json"
	"slices"
	"testing"
)

// Table tests of the parts of the fold step (fold.go) and of the run walk
// of the chunk-reuse shaping (runs.go), on items set up by hand.

// TestFoldBoundary: the fold keeps the newest items that fit in the fold
// keeps, and always the newest, never reaching back before what is
// folded already.
func TestFoldBoundary(t *testing.T) {
	tests := []struct {
		costs  []int
		keeps  int
		folded int
		want   int
	}{
		{[]int{100, 100, 100, 100}, 250, 0, 2},
		{[]int{100, 100, 100, 100}, 1000, 0, 0},
		{[]int{100, 100, 100, 5000}, 250, 0, 3}, // the newest alone is over: it stays
		{[]int{100, 300, 100, 100}, 250, 0, 2},  // stops at the first that does not fit
		{[]int{100, 100, 100, 100}, 1000, 2, 2}, // not before what is folded
	}
	for _, tt := range tests {
		m := history(16000, rd{reads: []int{3}}, rd{reads: []int{3}}, rd{reads: []int{3}})
		m.H.Folded = tt.folded
		if got := m.foldBoundary(Budget{FoldKeeps: tt.keeps}, tt.costs); got != tt.want {
			t.Errorf("foldBoundary(%v, keeps %d, folded %d) = %d, want %d", tt.costs, tt.keeps, tt.folded, got, tt.want)
		}
	}
}

// TestKeepInView: before the boundary a fold keeps the prompt of the turn
// in progress, its rounds whose results define the task, and what an
// earlier fold of the turn pinned; nothing of earlier turns.
func TestKeepInView(t *testing.T) {
	m := history(16000, rd{task: true, reads: []int{3}}, rd{reads: []int{3}}, rd{turn: true, reads: []int{3}}, rd{task: true, reads: []int{3}},
		rd{reads: []int{3}}, rd{reads: []int{3}})
	// p1 r1 r2 p2 r3 r4 r5 r6
	if got := names(m, m.keepInView(7)); !slices.Equal(got, []string{"p2", "r4"}) {
		t.Errorf("kept %q, want the turn's prompt and its task round", got)
	}
	m.H.Items[6].Pinned = m.H.Turns()
	if got := names(m, m.keepInView(7)); !slices.Equal(got, []string{"p2", "r4", "r5"}) {
		t.Errorf("kept %q, want what an earlier fold pinned too", got)
	}
	m.H.Items[1].Pinned = 1 // pinned for an earlier turn
	if got := names(m, m.keepInView(7)); !slices.Equal(got, []string{"p2", "r4", "r5"}) {
		t.Errorf("kept %q: an item pinned for an earlier turn folds", got)
	}
	if got := names(m, m.keepInView(4)); !slices.Equal(got, []string{"p2"}) {
		t.Errorf("kept %q before item 4", got)
	}
}

// TestWiden: an island of kept items shorter than minRun between two
// deletions takes the items before it along, until it is long enough,
// joins the kept rounds or reaches the start.
func TestWiden(t *testing.T) {
	tests := []struct {
		name  string
		costs []int
		keep  []int
		upto  int
		want  []int
	}{
		{"long enough", []int{100, 100, 100, 100, 100}, []int{2}, 4, []int{2}},
		{"short: the item before joins", []int{100, 100, 10, 100, 100}, []int{2}, 4, []int{1, 2}},
		{"short twice over", []int{100, 10, 10, 100, 100}, []int{2}, 4, []int{0, 1, 2}},
		{"joined to the kept rounds", []int{100, 100, 100, 10, 100}, []int{3}, 4, []int{3}},
		{"at the start", []int{10, 100, 100, 100}, []int{0}, 3, []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := history(16000, rd{reads: []int{3}}, rd{reads: []int{3}}, rd{reads: []int{3}}, rd{reads: []int{3}}, rd{reads: []int{3}})
			d := draftOf(t, m, ReasonShedPoint, "")
			if got := d.widen(tt.upto, append([]int(nil), tt.keep...), tt.costs); !slices.Equal(got, tt.want) {
				t.Errorf("widen(%d, %v) = %v, want %v", tt.upto, tt.keep, got, tt.want)
			}
		})
	}
}

// TestFoldMarks: with a chunk scan that reuses a run as short as an
// opening, a fold keeps the opening of the newest event message in its
// first deletion, and the openings kept before where nothing around is
// deleted; with none, or one that reuses only longer runs, no opening.
func TestFoldMarks(t *testing.T) {
	tests := []struct {
		name    string
		reuse   int
		asides  []int // items with an event's message after them
		heads   []int // of those, items out of view whose opening a fold kept
		dropped []int // rounds a shed took out of view
		keep    []int
		upto    int
		want    []int
	}{
		{"no chunk scan", 0, []int{1, 2}, nil, nil, []int{0}, 4, nil},
		{"a scan of long chunks", 64, []int{1, 2}, nil, nil, []int{0}, 4, nil},
		{"the newest message of the first deletion", 8, []int{1, 2}, nil, nil, []int{0}, 4, []int{3}},
		{"no message, no opening", 8, nil, nil, nil, []int{0}, 4, nil},
		{"only the first deletion's", 8, []int{1, 3}, nil, nil, []int{0, 2}, 4, []int{2}},
		{"an opening kept before, nothing deleted around", 8, []int{1, 2}, []int{1}, []int{1}, []int{0, 2}, 4, []int{2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := history(16000, rd{reads: []int{3}}, rd{reads: []int{3}}, rd{reads: []int{3}}, rd{reads: []int{3}}, rd{reads: []int{3}})
			m.Setup().ChunkReuse(tt.reuse)
			for k, i := range tt.asides {
				m.H.Items[i].After = &Aside{Message: contextMark(k+1) + " To fit", Head: slices.Contains(tt.heads, i)}
			}
			for _, i := range tt.dropped {
				m.H.Items[i].Dropped = true
			}
			m.H.invalidate()
			if got := m.foldMarks(tt.upto, tt.keep); !slices.Equal(got, tt.want) {
				t.Errorf("foldMarks(%d, %v) = %v, want %v", tt.upto, tt.keep, got, tt.want)
			}
		})
	}
}

// TestWalkRuns: the walk finds a reply the draft cuts with less than
// minRun tokens kept since the deletion before it, and offers the
// reasoning of a reply after a long enough run.
func TestWalkRuns(t *testing.T) {
	tests := []struct {
		name   string
		rounds []rd
		shed   [][2]int // results the draft sheds, by round and index
		cut    []int    // rounds whose reasoning it sheds
		mend   []int    // rounds offered to mend
		offer  []int    // rounds whose reasoning is offered
	}{
		{"a reply cut right after a shed result", []rd{{reads: []int{120}}, {think: 40, reads: []int{3}}, {think: 40, reads: []int{3}}, {reads: []int{3}}},
			[][2]int{{1, 0}}, []int{2}, []int{2}, []int{3}}, // mend refused: round 3 follows a long run
		{"a reply cut after a long run", []rd{{reads: []int{120, 30}}, {think: 40, reads: []int{3}}, {think: 40, reads: []int{3}}, {reads: []int{3}}},
			[][2]int{{1, 0}}, []int{2}, nil, []int{3}},
		{"nothing deleted, nothing to mend", []rd{{think: 40, reads: []int{3}}, {think: 40, reads: []int{3}}, {reads: []int{3}}},
			nil, nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := history(24000, tt.rounds...)
			d := draftOf(t, m, ReasonShedPoint, "")
			for _, s := range tt.shed {
				i := itemOf(m, s[0])
				r := m.H.Items[i].Results[s[1]]
				head, entry, ok := shedEntry(s[0], r, m.outline, 1000)
				if !ok {
					t.Fatalf("round %d's result %d cannot be shed", s[0], s[1])
				}
				d.shed(unit{item: i, result: s[1], head: head, entry: entry})
			}
			for _, round := range tt.cut {
				d.shed(unit{item: itemOf(m, round), result: ShedReasoning})
			}
			var mended, offered []int
			d.walkRuns(func(i int) bool {
				mended = append(mended, m.H.Items[i].Round)
				return false
			}, func(i int) bool {
				offered = append(offered, m.H.Items[i].Round)
				return false
			})
			if !slices.Equal(mended, tt.mend) || !slices.Equal(offered, tt.offer) {
				t.Errorf("mend offered %v, reasoning offered %v; want %v, %v", mended, offered, tt.mend, tt.offer)
			}
		})
	}
}

// TestStateRoundTrip: what a manager learned, saved and restored into a
// new one, gives the same decisions; what the state lacks stays.
func TestStateRoundTrip(t *testing.T) {
	m := history(16000, rd{reads: []int{30}})
	send(m)
	m.Observe(5000, 3000)
	m.progress = Progress{Stalled: 2, Round: 4}
	data, err := json.Marshal(m.State())
	if err != nil {
		t.Fatal(err)
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	back := history(0, rd{reads: []int{30}})
	back.Restore(st)
	if back.Gauge().Window() != 16000 || back.est.Ratio != m.est.Ratio || back.est.Samples != m.est.Samples ||
		back.reserve.Largest != m.reserve.Largest || back.progress.Stalled != 2 {
		t.Errorf("restored window %d ratio %v samples %d largest %d stalled %d", back.Gauge().Window(), back.est.Ratio, back.est.Samples,
			back.reserve.Largest, back.progress.Stalled)
	}
	if b1, _ := m.Gauge().Budget(); func() bool { b2, _ := back.Gauge().Budget(); return b1 != b2 }() {
		t.Error("the restored manager divides the window otherwise")
	}
	back.Restore(State{})
	if back.Gauge().Window() != 16000 || back.est.Samples != m.est.Samples {
		t.Error("an empty state changed what was restored")
	}
}
