package ctxwin

import (
	"fmt"
	"testing"
)

// TestFoldKeepsTheReplyAfterTheRecap: no shrink deletes a reply's
// reasoning right after another deletion, the sheds of a shed event and
// the deletions of a fold alike. The recap before, which a fold absorbs,
// can sit among the rounds it keeps (when a new turn's task payload fills
// the window soon after a fold), right before a reply whose reasoning the
// shed step cut: the reply's role header alone would stand between the two
// deletions, too short for the engine's chunk scan, which would reuse
// nothing after it. The reply stays whole instead.
func TestFoldKeepsTheReplyAfterTheRecap(t *testing.T) {
	kept := 0
	for _, window := range []int{12000, 16000, 24000} {
		for turnLen := 4; turnLen <= 16; turnLen += 4 {
			for small := 1; small <= 3; small++ {
				kept += foldKeepsReplies(t, window, turnLen, small)
			}
		}
	}
	if kept == 0 {
		t.Fatal("no reply kept its reasoning right after a deletion: the sessions do not exercise it")
	}
}

// foldKeepsReplies runs a session at window whose turns last turnLen
// rounds, each opened by a task payload, whose rounds all reason at length
// and whose every small-th read is small; it returns how many folds
// kept a reply whole right after a deletion.
func foldKeepsReplies(t *testing.T, window, turnLen, small int) int {
	m := session(window)
	m.Setup().ChunkReuse(8)
	kept := 0
	for i := 0; i < 300; i++ {
		if p := m.Prepare(); p.Shrink {
			before := m.H.Messages()
			if p.Note {
				m.NoteRound()
				m.Sent()
			}
			m.Shrink(p, "a note")
			after := m.H.Messages()
			if at, _ := reasoningAfterDeletion(before, after); at >= 0 {
				t.Fatalf("window %d, turns of %d, small %d, request %d: the reasoning of message %d was deleted whole right after another deletion",
					window, turnLen, small, i, at)
			}
			kept += wholeAfterDeletion(before, after)
		}
		send(m)
		id := fmt.Sprintf("c%d", i)
		if i%turnLen == 0 {
			startSpecTask(m, i, id)
			continue
		}
		m.H.AddRound(Message{Content: fmt.Sprintf("reading %d", i), Reasoning: lines(12, fmt.Sprintf("think %d", i)), ToolCalls: []ToolCall{call(id)}})
		n := 40
		if i%small == 0 {
			n = 3
		}
		m.H.AddResult(readResult(id, fmt.Sprintf("src/f%d.go", i), n))
	}
	return kept
}

// wholeAfterDeletion counts the replies of after that keep their
// reasoning right after a deletion.
func wholeAfterDeletion(before, after []Message) int {
	n := 0
	for _, r := range repliesAfterDeletion(before, after) {
		if after[r.at].Reasoning != "" {
			n++
		}
	}
	return n
}

// startSpecTask opens turn i, whose first round reads the spec that
// defines the task (a task payload, never shed).
func startSpecTask(m *Manager, i int, id string) {
	m.StartTurn(fmt.Sprintf("TASK %d: explain the parser", i))
	m.H.AddRound(Message{Content: "fetching the spec", ToolCalls: []ToolCall{call(id)}})
	r := readResult(id, fmt.Sprintf("spec%d.md", i), 60)
	r.Task = true
	m.H.AddResult(r)
}
