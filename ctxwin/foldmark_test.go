package ctxwin

import (
	"strings"
	"testing"
)

// TestFoldKeepsATaggedOpening: every event's message opens with a tag that
// the messages of the last events do not start with, and a fold's first
// deletion starts inside the opening of the newest such message it
// deletes, which stays where it was, a prefix of it; a later fold's first
// deletion then starts at the tag (see foldMarks).
func TestFoldKeepsATaggedOpening(t *testing.T) {
	m := session(16000)
	m.StartTurn("TASK: refactor the parser")
	var tags []byte
	var before []Message
	folds := 0
	for folds < 3 {
		p := fill(t, m, 60)
		before = m.H.Messages()
		if p.Note {
			m.NoteRequest()
			m.Sent()
		}
		ev := m.Shrink("a note", ReasonShedPoint)
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
