package ctxwin

import (
	"fmt"
	"strings"
	"testing"
)

// TestFoldKeepsATaggedOpening: every event's message opens with a tag that
// the messages of the last events do not start with, and a fold's first
// deletion starts inside the opening of the newest such message it
// deletes, which stays where it was, a prefix of it; a later fold's first
// deletion then starts at the tag (see foldMarks). It keeps none when the
// engine's chunk scan would not reuse a run that short, or runs none.
func TestFoldKeepsATaggedOpening(t *testing.T) {
	for _, chunk := range []int{0, 64} {
		m := session(16000)
		m.Setup().ChunkReuse(chunk)
		m.StartTurn("TASK: refactor the parser")
		for folded := false; !folded; {
			p := fill(t, m, 60)
			ev := m.Shrink(p, "a note")
			folded = ev != nil && ev.Fold != nil
			if folded && len(ev.Fold.Marks) > 0 {
				t.Errorf("n_cache_reuse %d: the fold kept openings %v", chunk, ev.Fold.Marks)
			}
		}
	}
	m := session(16000)
	m.Setup().ChunkReuse(8)
	m.StartTurn("TASK: refactor the parser")
	var tags []byte
	var before []Message
	folds := 0
	for folds < 3 {
		p := fill(t, m, 60)
		before = m.H.Messages()
		if p.Note {
			m.NoteRound()
			m.Sent()
		}
		ev := m.Shrink(p, "a note")
		if ev == nil {
			t.Fatal("no shrink at the shed point")
		}
		if !hasContextMark(ev.Message) || ev.Message[1] != ' ' {
			t.Fatalf("event message without its tag: %.40q", ev.Message)
		}
		for _, tag := range tags[max(0, len(tags)-len(eventTags)+1):] {
			if tag == ev.Message[0] {
				t.Fatalf("tag %c again within the last %d events", tag, len(eventTags)-1)
			}
		}
		tags = append(tags, ev.Message[0])
		if ev.Fold == nil {
			continue
		}
		folds++
		after := m.H.Messages()
		d := 0
		for d < len(before) && d < len(after) && before[d].Equal(after[d]) {
			d++
		}
		got := after[d]
		if !IsAside(got) || strings.Contains(got.Content, "\n") {
			t.Fatalf("fold %d: the first message after the first deletion is not an opening kept: %s %.60q", folds, got.Role, got.Content)
		}
		// It is the first line of the newest event message of the request
		// before that the fold took out of view.
		newest := ""
		for _, x := range before[d:] {
			if IsAside(x) && x.Content != NotePrompt && !containsMessage(after, x) {
				newest = x.Content
			}
			if containsMessage(after[d+1:], x) {
				break // the first deletion ends where a kept message is
			}
		}
		if newest == "" || firstLine(newest) != got.Content {
			t.Errorf("fold %d: kept the opening %.40q, the newest message deleted there opens %.40q", folds, got.Content, firstLine(newest))
		}
		if folds > 1 && (!IsAside(before[d]) || before[d].Content[0] == got.Content[0]) {
			t.Errorf("fold %d: the deletion does not start at another tag: %.40q then %.40q", folds, before[d].Content, got.Content)
		}
	}
}

func containsMessage(msgs []Message, m Message) bool {
	for _, x := range msgs {
		if x.Equal(m) {
			return true
		}
	}
	return false
}

// openingsFollowed checks that what follows each opening a fold kept is as
// it was in the request before (or another event's message): a deletion
// right after an opening, such as a reply's reasoning, would leave a run
// too short for the engine's chunk scan, which then reuses nothing after.
func openingsFollowed(before, after []Message) error {
	for i, m := range after[:max(len(after)-1, 0)] {
		if !IsAside(m) || m.Content == NotePrompt || strings.Contains(m.Content, "\n") || containsMessage(before, m) {
			continue // not an opening kept
		}
		next := after[i+1]
		if !IsAside(next) && !containsMessage(before, next) {
			return fmt.Errorf("message %d after the opening %.30q changed: %s %.60q", i+1, m.Content, next.Role, next.Content)
		}
	}
	return nil
}

// TestOpeningKeepsTheReplyAfterIt: no fold leaves an opening followed by a
// reply it changes (its reasoning dropped by the shed step), right after it
// or after rounds the event takes out of view whole (at 20000): it keeps
// the reply whole or gives up the opening (dropShortOpenings).
func TestOpeningKeepsTheReplyAfterIt(t *testing.T) {
	for _, window := range []int{8000, 12000, 16000, 20000, 24000} {
		for long := 1; long <= 3; long++ {
			for large := 2; large <= 5; large++ {
				openingKeepsReply(t, window, long, large)
			}
		}
	}
}

// openingKeepsReply runs a session at window whose every long-th reply
// reasons at length and every large-th read is large, through 4 folds.
func openingKeepsReply(t *testing.T, window, long, large int) {
	m := session(window)
	m.Setup().ChunkReuse(8)
	m.StartTurn("TASK: explain the parser")
	folds := 0
	for i := 0; folds < 4 && i < 400; i++ {
		if p := m.Prepare(); p.Shrink {
			before := m.H.Messages()
			if p.Note {
				m.NoteRound()
				m.Sent()
			}
			ev := m.Shrink(p, "a note")
			if ev != nil && ev.Fold != nil {
				folds++
				if err := openingsFollowed(before, m.H.Messages()); err != nil {
					t.Fatalf("window %d, long %d, large %d, fold %d: %v", window, long, large, folds, err)
				}
			}
		}
		send(m)
		id := fmt.Sprintf("c%d", i)
		reasoning := lines(3, "think")
		if i%long == 0 {
			reasoning = lines(60, "think long")
		}
		m.H.AddRound(Message{Content: fmt.Sprintf("reading %d", i), Reasoning: reasoning, ToolCalls: []ToolCall{call(id)}})
		n := 4
		if i%large == 1 {
			n = 120
		}
		m.H.AddResult(readResult(id, fmt.Sprintf("src/f%d.go", i), n))
	}
}
