package ctxwin

import (
	"strings"
	"testing"
)

// Table tests of what the history shows (history.go) and of the collapse
// without a known window (nowindow.go).

// TestInViewAndShows: an item is in view unless folded or dropped, or
// pinned; a dropped round still shows what events appended after it until
// a fold takes it.
func TestInViewAndShows(t *testing.T) {
	tests := []struct {
		name           string
		folded         int
		dropped        bool
		pinned         int
		inView, showed bool
	}{
		{"plain", 0, false, 0, true, true},
		{"folded", 3, false, 0, false, false},
		{"folded but pinned", 3, false, 1, true, true},
		{"dropped", 0, true, 0, false, true},
		{"dropped and folded", 3, true, 0, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := history(16000, rd{reads: []int{3}}, rd{reads: []int{3}}, rd{reads: []int{3}})
			h := m.H
			h.Folded = tt.folded
			it := h.Items[2]
			it.Dropped, it.Pinned = tt.dropped, tt.pinned
			if got := h.InView(2); got != tt.inView {
				t.Errorf("in view %v, want %v", got, tt.inView)
			}
			if got := h.shows(2); got != tt.showed {
				t.Errorf("shows %v, want %v", got, tt.showed)
			}
		})
	}
}

// TestHistoryCounts: turns and rounds count on across turns, and a round
// before any turn belongs to turn 1; the rounds a recap folded count.
func TestHistoryCounts(t *testing.T) {
	h := NewHistory("sys", nil)
	if h.Turns() != 0 || h.Rounds() != 0 || h.Last() != nil {
		t.Fatalf("an empty history: turns %d, rounds %d", h.Turns(), h.Rounds())
	}
	if it := h.AddRound(Message{Content: "x"}); it.Turn != 1 || it.Round != 1 || it.Assistant.Role != RoleAssistant {
		t.Errorf("a round before any turn: %+v", it)
	}
	h.StartTurn("t2")
	h.AddRound(Message{})
	if it := h.AddRound(Message{}); it.Turn != 2 || it.Round != 3 {
		t.Errorf("turn %d round %d, want turn 2 round 3", it.Turn, it.Round)
	}
	h2 := NewHistory("sys", nil)
	h2.Recap = &Recap{LastRound: 7}
	h2.StartTurn("t")
	if it := h2.AddRound(Message{}); it.Round != 8 {
		t.Errorf("after a recap of rounds to 7, round %d", it.Round)
	}
}

// TestNoWindowCollapse: with no window, each request collapses the
// results of older rounds to their first line, with one message naming
// them, and drops reasoning older than ReasoningRounds rounds; the newest
// round stays whole.
func TestNoWindowCollapse(t *testing.T) {
	tests := []struct {
		name      string
		rounds    []rd
		keep      int // ReasoningRounds
		results   int // results collapsed
		reasoning int // reasonings dropped
	}{
		{"one round", []rd{{think: 3, reads: []int{30}}}, 2, 0, 0},
		{"older results collapse", []rd{{reads: []int{30}}, {reads: []int{30, 3}}, {reads: []int{30}}}, 2, 2, 0},
		{"old reasoning goes", []rd{{think: 3, reads: []int{3}}, {think: 3, reads: []int{3}}, {think: 3, reads: []int{3}}}, 2, 0, 1},
		{"more rounds keep reasoning", []rd{{think: 3, reads: []int{3}}, {think: 3, reads: []int{3}}, {think: 3, reads: []int{3}}}, 3, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := history(0, tt.rounds...)
			m.Setup().Configure(Settings{ReasoningRounds: tt.keep})
			p := m.Prepare()
			results, reasoning := 0, 0
			if ev := p.Applied; ev != nil {
				for _, c := range ev.Shed {
					switch {
					case c.Result >= 0:
						results++
					case c.Result == ShedReasoning:
						reasoning++
					}
				}
				if ev.Reason != ReasonNoWindow || (results > 0) != strings.Contains(ev.Message, ShedNotice) {
					t.Errorf("event %q, message %q", ev.Reason, ev.Message)
				}
			}
			if results != tt.results || reasoning != tt.reasoning {
				t.Errorf("collapsed %d results and %d reasonings, want %d and %d", results, reasoning, tt.results, tt.reasoning)
			}
			for _, r := range m.H.Last().Results {
				if r.Shed || r.Cut {
					t.Error("the newest round was collapsed")
				}
			}
			if again := m.Prepare(); again.Applied != nil {
				t.Errorf("a second request collapsed again: %+v", again.Applied)
			}
		})
	}
}
