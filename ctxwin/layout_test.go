package ctxwin

import (
	"fmt"
	"strings"
	"testing"
)

// TestShedListsAFileOutlineOnce: reads of one file shed in one event list
// its outline once; the others say which entry has it, and reads of other
// files keep their own.
func TestShedListsAFileOutlineOnce(t *testing.T) {
	m := session(24000)
	m.StartTurn("the task")
	send(m)
	var p Plan
	for i := 0; i < 500 && !p.Shrink; i++ {
		path := "src/same.go"
		if i%3 == 2 {
			path = fmt.Sprintf("src/other%d.go", i)
		}
		id := fmt.Sprintf("c%d", i)
		m.H.AddRound(Message{Content: fmt.Sprintf("reading %d", i), ToolCalls: []ToolCall{call(id)}})
		m.H.AddResult(readResult(id, path, 120))
		p = m.Prepare()
		if !p.Shrink {
			send(m)
		}
	}
	ev := m.Shrink(p, "")
	if ev == nil || ev.Fold != nil {
		t.Fatalf("want a shed, got %+v", ev)
	}
	msg := ev.Message
	if n := strings.Count(msg, "func Outlinesame()"); n != 1 {
		t.Errorf("the message lists src/same.go's outline %d times, want once:\n%s", n, msg)
	}
	first := -1
	refs, others := 0, 0
	for _, c := range ev.Shed {
		if c.Result < 0 {
			continue
		}
		it := m.H.Items[c.Item]
		r := it.Results[c.Result]
		entry := fmt.Sprintf("- round %d: `%s`", it.Round, strings.TrimSuffix(r.View, "\n"))
		at := strings.Index(msg, entry)
		if at < 0 {
			t.Fatalf("no entry for round %d in:\n%s", it.Round, msg)
		}
		rest := msg[at:]
		if next := strings.Index(rest[1:], "\n- round "); next >= 0 {
			rest = rest[:next+1]
		}
		switch {
		case r.Path != "src/same.go":
			others++
			if !strings.Contains(rest, "outline:\n  L1-20 func Outline"+strings.TrimSuffix(strings.TrimPrefix(r.Path, "src/"), ".go")) {
				t.Errorf("round %d's entry lost its own outline:\n%s", it.Round, rest)
			}
		case first < 0:
			first = it.Round
			if !strings.Contains(rest, "func Outlinesame()") {
				t.Errorf("the first entry of src/same.go has no outline:\n%s", rest)
			}
		default:
			refs++
			if want := fmt.Sprintf("outline: as for round %d above", first); !strings.Contains(rest, want) {
				t.Errorf("round %d's entry does not say %q:\n%s", it.Round, want, rest)
			}
		}
	}
	if refs == 0 || others == 0 {
		t.Fatalf("the shed took %d more reads of src/same.go and %d of other files; want some of each:\n%s", refs, others, msg)
	}
	// The estimate priced the message as written.
	if got, want := m.Gauge().Size(), ev.After; got > want+want/50 || got < want-want/50 {
		t.Errorf("the request is %d tokens, the shed priced it at %d", got, want)
	}
}
