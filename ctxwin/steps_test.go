package ctxwin

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Table tests of the steps of a shrink (pipeline.go), each on a history
// built for it: what the step changes in the draft the steps before left.

// rd is a round of a test history.
type rd struct {
	think int   // lines of reasoning
	reads []int // the lines of each read result (a read of 3 lines is too small to shed)
	task  bool  // its results define the task
	turn  bool  // a new turn opens before it
	args  int   // bytes of a long string argument of its first call
	say   int   // lines the reply says besides its calls
}

// history builds a session at window with the rounds after a first turn's
// prompt; every result reads a file of its own.
func history(window int, rounds ...rd) *Manager {
	m := session(window)
	m.StartTurn("TASK 1: explain the parser")
	for i, r := range rounds {
		n := i + 1
		if r.turn {
			m.StartTurn(fmt.Sprintf("TASK %d: explain the lexer", n))
		}
		reply := Message{Content: fmt.Sprintf("round %d", n)}
		if r.say > 0 {
			reply.Content += "\n" + lines(r.say, fmt.Sprintf("said %d", n))
		}
		for j := range r.reads {
			c := call(fmt.Sprintf("c%d-%d", n, j))
			if j == 0 && r.args > 0 {
				c.Arguments = fmt.Sprintf(`{"path":"x","content":%q}`, strings.Repeat("word ", r.args/5))
			}
			reply.ToolCalls = append(reply.ToolCalls, c)
		}
		if r.think > 0 {
			reply.Reasoning = lines(r.think, fmt.Sprintf("think %d", n))
		}
		m.H.AddRound(reply)
		for j, k := range r.reads {
			res := readResult(reply.ToolCalls[j].ID, fmt.Sprintf("src/r%d_%d.go", n, j), k)
			res.Task = r.task
			m.H.AddResult(res)
		}
	}
	return m
}

// draftOf is a draft of a shrink of m for reason, with the note.
func draftOf(t *testing.T, m *Manager, reason, note string) *draft {
	t.Helper()
	b, ok := m.Gauge().Budget()
	if !ok {
		t.Fatal("no window")
	}
	return m.newDraft(b, reason, note)
}

// changes names the draft's shed changes by round: "2/0" a result, "2
// reasoning", "2 arguments", "2 whole".
func changes(d *draft) []string {
	var out []string
	for _, c := range d.ev.Shed {
		round := d.m.H.Items[c.Item].Round
		switch c.Result {
		case ShedReasoning:
			out = append(out, fmt.Sprintf("%d reasoning", round))
		case ShedArguments:
			out = append(out, fmt.Sprintf("%d arguments", round))
		case ShedRound:
			out = append(out, fmt.Sprintf("%d whole", round))
		default:
			out = append(out, fmt.Sprintf("%d/%d", round, c.Result))
		}
	}
	return out
}

// itemOf is the index of round n's item.
func itemOf(m *Manager, round int) int {
	for i, it := range m.H.Items {
		if it.Round == round {
			return i
		}
	}
	return -1
}

// TestStepShed: the shed step sheds oldest first, large payloads before
// small, until the request is at the target, a shed round's reasoning
// with it; it takes out of view whole a round all of whose results it
// sheds; it never sheds the newest round, the task's results, a result too
// small to be worth it, nor anything for a fold on demand.
func TestStepShed(t *testing.T) {
	small, large, tiny := 30, 120, 3 // a 30-line read is under LargePayload
	tests := []struct {
		name   string
		rounds []rd
		reason string
		free   int // tokens the target asks the shed to free
		want   []string
	}{
		{"at the target it sheds nothing",
			[]rd{{reads: []int{large, tiny}}, {reads: []int{tiny}}}, ReasonShedPoint, 0, nil},
		{"large before small, though newer",
			[]rd{{reads: []int{small, tiny}}, {reads: []int{large, tiny}}, {reads: []int{tiny}}}, ReasonShedPoint, 1, []string{"2/0"}},
		{"oldest first among the large",
			[]rd{{reads: []int{large, tiny}}, {reads: []int{large, tiny}}, {reads: []int{tiny}}}, ReasonShedPoint, 1, []string{"1/0"}},
		{"the small once the large are gone",
			[]rd{{reads: []int{small, tiny}}, {reads: []int{large, tiny}}, {reads: []int{small, tiny}}, {reads: []int{tiny}}}, ReasonShedPoint, 4500,
			[]string{"2/0", "1/0"}},
		{"down to the target and no further",
			[]rd{{reads: []int{large, tiny}}, {reads: []int{large, tiny}}, {reads: []int{large, tiny}}, {reads: []int{tiny}}}, ReasonShedPoint, 4500,
			[]string{"1/0", "2/0"}},
		{"a shed round's reasoning goes with it",
			[]rd{{think: 5, reads: []int{large, tiny}}, {reads: []int{tiny}}}, ReasonShedPoint, 1, []string{"1/0", "1 reasoning"}},
		{"long reasoning is a large payload of its own",
			[]rd{{reads: []int{small, tiny}}, {think: 80, reads: []int{tiny}}, {reads: []int{tiny}}}, ReasonShedPoint, 1, []string{"2 reasoning"}},
		{"a long argument is cut short",
			[]rd{{args: 4000, reads: []int{tiny}}, {reads: []int{tiny}}}, ReasonShedPoint, 1, []string{"1 arguments"}},
		{"a round all of whose results go leaves the view whole",
			[]rd{{think: 5, reads: []int{large}}, {reads: []int{tiny}}}, ReasonShedPoint, 1, []string{"1/0", "1 whole"}},
		{"the newest round is never shed",
			[]rd{{reads: []int{tiny}}, {think: 80, reads: []int{large}}}, ReasonShedPoint, 1000, nil},
		{"the task's results are never shed",
			[]rd{{task: true, reads: []int{large}}, {reads: []int{tiny}}}, ReasonShedPoint, 1000, nil},
		{"a result too small to be worth it stays",
			[]rd{{reads: []int{tiny, tiny}}, {reads: []int{tiny}}}, ReasonShedPoint, 1000, nil},
		{"a fold on demand sheds nothing",
			[]rd{{reads: []int{large, tiny}}, {reads: []int{tiny}}}, ReasonCompact, 1000, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := history(24000, tt.rounds...)
			d := draftOf(t, m, tt.reason, "")
			before := d.total
			d.b.ShedTarget = d.total - tt.free
			stepShed(d)
			if got := changes(d); !slices.Equal(got, tt.want) {
				t.Fatalf("shed %q, want %q", got, tt.want)
			}
			if len(tt.want) > 0 && (d.total > d.b.ShedTarget || d.total >= before) {
				t.Errorf("the request is %d tokens after the shed, from %d; the target is %d", d.total, before, d.b.ShedTarget)
			}
			if len(tt.want) == 0 && d.total != before {
				t.Errorf("nothing shed, yet the request went from %d to %d tokens", before, d.total)
			}
			// Each result shed keeps its first line, and its entry is listed.
			for _, c := range d.ev.Shed {
				if c.Result < 0 {
					continue
				}
				r := m.H.Items[c.Item].Results[c.Result]
				if c.View != firstLine(r.Text)+"\n" || !strings.Contains(c.Entry, firstLine(r.Text)) {
					t.Errorf("round %d's result keeps %q, entry %q", m.H.Items[c.Item].Round, c.View, c.Entry)
				}
			}
			if n := len(d.entries); n != countResults(d.ev.Shed) {
				t.Errorf("%d entries for %d results shed", n, countResults(d.ev.Shed))
			}
		})
	}
}

// countResults counts the results among shed changes.
func countResults(cs []ShedChange) int {
	n := 0
	for _, c := range cs {
		if c.Result >= 0 {
			n++
		}
	}
	return n
}

// TestReuseAfterShed: the shaping after the shed keeps whole a reply the
// shed cut right after a deletion (the role header alone would stand
// between two deletions, too short for the engine's chunk scan), unless
// that leaves the request over the usable window, and takes back what
// that added from the reasoning of a reply after a long enough run.
func TestReuseAfterShed(t *testing.T) {
	large, small, tiny := 120, 30, 3
	tests := []struct {
		name   string
		rounds []rd
		tight  bool // the usable window is the request as the shed leaves it
		shed   []string
		want   []string
	}{
		{"a reply right after a dropped round stays whole; a later one pays",
			[]rd{{reads: []int{large}}, {think: 80, reads: []int{tiny}}, {think: 80, reads: []int{tiny}}, {reads: []int{tiny}}}, false,
			[]string{"1/0", "2 reasoning", "1 whole"}, []string{"1/0", "1 whole", "3 reasoning"}},
		{"cut arguments right after a deletion stay whole too",
			[]rd{{reads: []int{large}}, {args: 4000, reads: []int{tiny}}, {think: 80, reads: []int{tiny}}, {reads: []int{tiny}}}, false,
			[]string{"1/0", "2 arguments", "1 whole"}, []string{"1/0", "1 whole", "3 reasoning"}},
		{"fitting comes before the engine's reuse",
			[]rd{{reads: []int{large}}, {think: 80, reads: []int{tiny}}, {think: 80, reads: []int{tiny}}, {reads: []int{tiny}}}, true,
			[]string{"1/0", "2 reasoning", "1 whole"}, []string{"1/0", "2 reasoning", "1 whole"}},
		{"a reply after a long run stays cut",
			[]rd{{reads: []int{large, small}}, {think: 80, reads: []int{tiny}}, {think: 80, reads: []int{tiny}}, {reads: []int{tiny}}}, false,
			[]string{"1/0", "2 reasoning"}, []string{"1/0", "2 reasoning"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := history(24000, tt.rounds...)
			d := draftOf(t, m, ReasonShedPoint, "")
			d.b.ShedTarget = d.total - 5000
			stepShed(d)
			if got := changes(d); !slices.Equal(got, tt.shed) {
				t.Fatalf("the shed step shed %q, want %q", got, tt.shed)
			}
			shed := d.total
			if tt.tight {
				d.b.Usable = d.total
			}
			reuseAfterShed(d)
			if got := changes(d); !slices.Equal(got, tt.want) {
				t.Fatalf("after the shaping %q, want %q", got, tt.want)
			}
			if d.total > d.b.Usable {
				t.Errorf("the request is %d tokens, over the usable window %d", d.total, d.b.Usable)
			}
			if !slices.Equal(tt.shed, tt.want) && d.total > shed {
				t.Errorf("the shaping left the request at %d tokens, the shed at %d: it did not take back what it kept", d.total, shed)
			}
		})
	}
}

// names names items by what they are: "p1" the prompt of turn 1, "r3"
// round 3.
func names(m *Manager, items []int) []string {
	var out []string
	for _, i := range items {
		it := m.H.Items[i]
		if it.IsRound() {
			out = append(out, fmt.Sprintf("r%d", it.Round))
		} else {
			out = append(out, fmt.Sprintf("p%d", it.Turn))
		}
	}
	return out
}

// TestStepFold: the fold step folds when the request is over the shed
// target (always, on demand), the oldest items first, keeping the newest
// that fit in the fold keeps, the prompt of the turn in progress and the
// rounds that define its task; a fold that would not shrink the request
// is called off; the sheds of what it folds are moot.
func TestStepFold(t *testing.T) {
	small, tiny := 30, 3
	five := []rd{{reads: []int{small}}, {reads: []int{small}}, {reads: []int{small}}, {reads: []int{small}}, {reads: []int{small}}}
	tests := []struct {
		name   string
		rounds []rd
		reason string
		over   bool // the request is over the shed target
		keeps  int  // how many of the newest items fit in the fold keeps
		folded []string
		kept   []string
	}{
		{"under the target nothing folds", five, ReasonShedPoint, false, 2, nil, nil},
		{"over it the oldest fold, the newest that fit stay", five, ReasonShedPoint, true, 2, []string{"r1", "r2", "r3"}, []string{"p1"}},
		{"more room in the fold keeps, fewer fold", five, ReasonShedPoint, true, 3, []string{"r1", "r2"}, []string{"p1"}},
		{"the newest item stays whatever it costs", five, ReasonShedPoint, true, 0, []string{"r1", "r2", "r3", "r4"}, []string{"p1"}},
		{"a round that defines the task stays",
			[]rd{{reads: []int{small}}, {task: true, reads: []int{small}}, {reads: []int{small}}, {reads: []int{small}}, {reads: []int{small}}},
			ReasonShedPoint, true, 2, []string{"r1", "r3"}, []string{"p1", "r2"}},
		{"an earlier turn's prompt folds; a prompt kept between deletions takes the round before along",
			[]rd{{reads: []int{small}}, {reads: []int{small}}, {turn: true, reads: []int{small}}, {reads: []int{small}}, {reads: []int{small}}, {reads: []int{small}}},
			ReasonShedPoint, true, 2, []string{"p1", "r1", "r3", "r4"}, []string{"r2", "p2"}},
		{"on demand it folds under the target", five, ReasonCompact, false, 2, []string{"r1", "r2", "r3"}, []string{"p1"}},
		{"a fold that would not shrink the request is called off",
			[]rd{{reads: []int{tiny}}, {reads: []int{small}}, {reads: []int{small}}}, ReasonShedPoint, true, 2, nil, nil},
		{"on demand, even so",
			[]rd{{reads: []int{tiny}}, {reads: []int{small}}, {reads: []int{small}}}, ReasonCompact, false, 2, []string{"r1"}, []string{"p1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := history(24000, tt.rounds...)
			d := draftOf(t, m, tt.reason, "")
			d.b.ShedTarget = d.total
			if tt.over {
				d.b.ShedTarget--
			}
			d.b.FoldKeeps = newestCost(d, tt.keeps)
			stepFold(d)
			f := d.ev.Fold
			if f == nil {
				if tt.folded != nil {
					t.Fatalf("no fold, want %q folded", tt.folded)
				}
				return
			}
			if tt.folded == nil {
				t.Fatalf("folded %q, want no fold", names(m, d.leaving(f.Upto, f.Keep)))
			}
			if got := names(m, d.leaving(f.Upto, f.Keep)); !slices.Equal(got, tt.folded) {
				t.Errorf("folded %q, want %q", got, tt.folded)
			}
			if got := names(m, f.Keep); !slices.Equal(got, tt.kept) {
				t.Errorf("kept %q in view among them, want %q", got, tt.kept)
			}
			rounds := 0
			for _, n := range tt.folded {
				if n[0] == 'r' {
					rounds++
				}
			}
			if f.Rounds != rounds {
				t.Errorf("the fold counts %d rounds, want %d", f.Rounds, rounds)
			}
			if f.Recap != nil {
				t.Error("the fold step wrote the recap: that is the recap step's")
			}
		})
	}
}

// TestStepFoldMootsItsSheds: what the fold folds loses its sheds and their
// entries; the sheds of what it keeps stay, with theirs.
func TestStepFoldMootsItsSheds(t *testing.T) {
	large, tiny := 120, 3
	m := history(24000, rd{think: 80, reads: []int{large, tiny}}, rd{reads: []int{tiny}}, rd{reads: []int{tiny}},
		rd{reads: []int{large, tiny}}, rd{reads: []int{tiny}}, rd{reads: []int{tiny}})
	d := draftOf(t, m, ReasonShedPoint, "")
	d.b.ShedTarget = d.total - 8000
	stepShed(d)
	if got, want := changes(d), []string{"1/0", "1 reasoning", "4/0"}; !slices.Equal(got, want) {
		t.Fatalf("the shed step shed %q, want %q", got, want)
	}
	d.b.ShedTarget = d.total - 1
	d.b.FoldKeeps = newestCost(d, 3)
	stepFold(d)
	if d.ev.Fold == nil || !slices.Equal(names(m, d.leaving(d.ev.Fold.Upto, d.ev.Fold.Keep)), []string{"r1", "r2", "r3"}) {
		t.Fatalf("want rounds 1-3 folded, got %+v", d.ev.Fold)
	}
	if got, want := changes(d), []string{"4/0"}; !slices.Equal(got, want) {
		t.Errorf("after the fold the sheds are %q, want %q", got, want)
	}
	if len(d.entries) != 1 || m.H.Items[d.entries[0].item].Round != 4 {
		t.Errorf("after the fold the entries are %+v, want round 4's alone", d.entries)
	}
}

// newestCost is what the newest n items cost as the draft leaves them.
func newestCost(d *draft, n int) int {
	sum := 0
	for _, c := range d.costs[len(d.costs)-n:] {
		sum += c
	}
	return sum
}
