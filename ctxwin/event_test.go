package ctxwin

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Table tests of what an event does to the history (event.go): each
// change Apply makes, and the messages an event appends.

func TestContextMark(t *testing.T) {
	tests := []struct {
		n    int
		want string
	}{
		{1, "A [context]"},
		{2, "B [context]"},
		{26, "Z [context]"},
		{27, "a [context]"},
		{52, "z [context]"},
		{53, "A [context]"}, // the 53rd event's tag is the first's: 52 apart
	}
	for _, tt := range tests {
		if got := contextMark(tt.n); got != tt.want {
			t.Errorf("contextMark(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"A [context] To fit", true},
		{"[context] an older log's message", true},
		{"AB[context]", false},
		{"the [context] word", false},
		{"", false},
	} {
		if got := hasContextMark(tt.s); got != tt.want {
			t.Errorf("hasContextMark(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}

func TestIsAside(t *testing.T) {
	tests := []struct {
		m    Message
		want bool
	}{
		{Message{Role: RoleUser, Content: NotePrompt}, true},
		{Message{Role: RoleUser, Content: "C [context] To fit the context window, older tool results were shed."}, true},
		{Message{Role: RoleAssistant, Content: "C [context] a reply quoting it"}, false},
		{Message{Role: RoleUser, Content: "please fix the [context] code"}, false},
		{Message{Role: RoleTool, Content: NotePrompt}, false},
	}
	for _, tt := range tests {
		if got := IsAside(tt.m); got != tt.want {
			t.Errorf("IsAside(%+v) = %v, want %v", tt.m, got, tt.want)
		}
	}
}

// TestAsideMessages: an event's message follows the note round's prompt
// and the note when the note stays; a fold that keeps only its opening
// shows its first line alone.
func TestAsideMessages(t *testing.T) {
	msg := "A [context] To fit the context window, older tool results were shed.\n- round 1: `x`"
	tests := []struct {
		name string
		a    Aside
		want []Message
	}{
		{"the message", Aside{Message: msg}, []Message{{Role: RoleUser, Content: msg}}},
		{"after the note", Aside{Message: msg, Note: "the note"},
			[]Message{{Role: RoleUser, Content: NotePrompt}, {Role: RoleAssistant, Content: "the note"}, {Role: RoleUser, Content: msg}}},
		{"the opening alone", Aside{Message: msg, Note: "the note", Head: true},
			[]Message{{Role: RoleUser, Content: "A [context] To fit the context window, older tool results were shed."}}},
	}
	for _, tt := range tests {
		if got := tt.a.messages(nil); fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// TestApplyEachChange: Apply makes each change an event names, and
// ignores what names no item or result.
func TestApplyEachChange(t *testing.T) {
	mk := func() *Manager {
		return history(24000, rd{think: 5, args: 1000, reads: []int{30, 30}}, rd{reads: []int{30}}, rd{reads: []int{3}})
	}
	tests := []struct {
		name  string
		ev    Event
		check func(t *testing.T, m *Manager)
	}{
		{"a result shed keeps its view", Event{Shed: []ShedChange{{Item: 1, Result: 0, View: "head\n", Entry: "entry"}}}, func(t *testing.T, m *Manager) {
			r := m.H.Items[1].Results[0]
			if !r.Shed || r.Shown() != "head\n" || r.Entry != "entry" || r.Cut {
				t.Errorf("the result: shed %v, shown %q, entry %q", r.Shed, r.Shown(), r.Entry)
			}
		}},
		{"reasoning shed", Event{Shed: []ShedChange{{Item: 1, Result: ShedReasoning}}}, func(t *testing.T, m *Manager) {
			if !m.H.Items[1].ReasoningShed || m.H.Messages()[2].Reasoning != "" {
				t.Error("the reasoning is still shown")
			}
		}},
		{"arguments cut", Event{Shed: []ShedChange{{Item: 1, Result: ShedArguments, Calls: []ToolCall{{ID: "c1-0", Name: "read", Arguments: "{}"}}}}}, func(t *testing.T, m *Manager) {
			if got := m.H.Messages()[2].ToolCalls[0].Arguments; got != "{}" {
				t.Errorf("the call shows %q", got)
			}
			if m.H.Items[1].Assistant.ToolCalls[0].Arguments == "{}" {
				t.Error("the reply's own calls were changed")
			}
		}},
		{"a round out of view", Event{Shed: []ShedChange{{Item: 2, Result: ShedRound}}}, func(t *testing.T, m *Manager) {
			if !m.H.Items[2].Dropped || m.H.InView(2) {
				t.Error("round 2 is still in view")
			}
		}},
		{"the message after the newest item", Event{At: 3, Message: "A [context] To fit", Note: "n"}, func(t *testing.T, m *Manager) {
			a := m.H.Items[3].After
			if a == nil || a.Message != "A [context] To fit" || a.Note != "n" || a.Recap || m.H.Events != 1 {
				t.Errorf("after item 3: %+v, events %d", a, m.H.Events)
			}
		}},
		{"a recut result", Event{Recut: []ShedChange{{Item: 1, Result: 1, View: "cut view"}}}, func(t *testing.T, m *Manager) {
			if r := m.H.Items[1].Results[1]; !r.Cut || r.Shown() != "cut view" {
				t.Errorf("the recut result shows %q", r.Shown())
			}
		}},
		{"a fold", Event{At: 3, Message: "B [context] folded", Fold: &FoldChange{Upto: 2, Keep: []int{0}, Recap: &Recap{Text: "<recap>"}}}, func(t *testing.T, m *Manager) {
			h := m.H
			if h.Folded != 2 || h.Recap == nil || h.Items[0].Pinned != h.Turns() || h.InView(1) || !h.InView(0) || !h.Items[3].After.Recap {
				t.Errorf("folded %d, pinned %d, in view %v %v", h.Folded, h.Items[0].Pinned, h.InView(0), h.InView(1))
			}
		}},
		{"changes to nothing", Event{Shed: []ShedChange{{Item: 9, Result: 0}, {Item: 1, Result: 7}, {Item: -1}}, Recut: []ShedChange{{Item: 1, Result: 9}}}, func(t *testing.T, m *Manager) {
			fresh := mk()
			if fmt.Sprint(m.H.Messages()) != fmt.Sprint(fresh.H.Messages()) {
				t.Error("changes naming nothing changed the history")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mk()
			m.H.Messages()
			ev := tt.ev
			m.Apply(&ev)
			tt.check(t, m)
		})
	}
}

// TestApplyFoldAbsorbsTheRecapBefore: a fold takes out the message of the
// fold before it, keeps the opening of the messages it marks, and clears
// the opening of those it no longer marks.
func TestApplyFoldAbsorbsTheRecapBefore(t *testing.T) {
	m := history(24000, rd{reads: []int{3}}, rd{reads: []int{3}}, rd{reads: []int{3}}, rd{reads: []int{3}}, rd{reads: []int{3}})
	h := m.H
	h.Items[1].After = &Aside{Message: "A [context] the fold before", Recap: true}
	h.Items[2].After = &Aside{Message: "B [context] a shed\n- round 2: `x`"}
	h.Items[3].After = &Aside{Message: "C [context] a shed before\n- round 1: `y`", Head: true}
	m.Apply(&Event{At: 5, Message: "D [context] the fold", Fold: &FoldChange{Upto: 4, Keep: []int{0}, Marks: []int{3}, Recap: &Recap{Text: "<recap>"}}})
	if h.Items[1].After != nil {
		t.Error("the fold before's message stays")
	}
	if a := h.Items[2].After; a == nil || !a.Head {
		t.Errorf("the marked opening: %+v", a)
	}
	if a := h.Items[3].After; a == nil || a.Head {
		t.Errorf("an opening no longer marked keeps its head: %+v", a)
	}
	var openings []string
	for _, msg := range h.Messages() {
		if IsAside(msg) {
			openings = append(openings, firstLine(msg.Content))
		}
	}
	// The unmarked message goes out of view with its item.
	if want := []string{"B [context] a shed", "D [context] the fold"}; !slices.Equal(openings, want) {
		t.Errorf("the events' messages in view open %q, want %q", openings, want)
	}
	if msgs := h.Messages(); strings.Contains(fmt.Sprint(msgs), "- round 2: `x`") {
		t.Error("the marked message shows more than its opening")
	}
}
