package ctxwin

import (
	"fmt"
	"strings"
	"testing"
)

// Issue 27 in ctxwin: a new result cut after its shrink, a guard that does
// not count a shrink that freed little as a stall, what a shed keeps of a
// command and of a diff, and the heading of the shed.

// TestRecutAfterShrink: a read that comes when the request is near the shed
// point is cut to the little room left; the shrink of the same request
// makes room, and the read takes it (Event.Recut), which a replay of the
// event gives again.
func TestRecutAfterShrink(t *testing.T) {
	m := session(16000)
	m.StartTurn("task")
	b, _ := m.Gauge().Budget()
	for i := 0; m.Gauge().Size() < b.ShedPoint*85/100; i++ {
		id := fmt.Sprint(i)
		m.AddRound(Message{ToolCalls: []ToolCall{call(id)}}, 20)
		m.H.AddResult(readResult(id, fmt.Sprintf("src/f%d.go", i), 20))
		if p := m.Prepare(); p.Shrink {
			t.Fatalf("setup: shrank at read %d", i)
		}
		send(m)
	}
	m.AddRound(Message{ToolCalls: []ToolCall{call("big")}}, 20)
	big := readResult("big", "src/big.go", 2000)
	m.H.AddResult(big)
	p := m.Prepare()
	before := len(big.Shown())
	if !p.Shrink || !big.Cut {
		t.Fatalf("setup: the big read is not cut (%v) or the request does not shrink (%+v)", big.Cut, p)
	}
	ev := m.Shrink(p, "")
	if ev == nil || len(ev.Recut) != 1 {
		t.Fatalf("the shrink did not cut the new read again: %+v", ev)
	}
	kept := m.Prices().Tokens(len(big.Shown()), false)
	t.Logf("the read keeps %d bytes before the shrink, %d after (%d tokens; usable %d, request %d)", before, len(big.Shown()), kept, b.Usable, m.Gauge().Size())
	if kept < b.Usable/4 {
		t.Errorf("the read keeps %d tokens after the shrink, less than a quarter of usable (%d)", kept, b.Usable/4)
	}
	if m.Gauge().Size() > b.Usable {
		t.Errorf("the request is %d tokens after the recut, over the usable window %d", m.Gauge().Size(), b.Usable)
	}
	view := big.View
	big.View, big.Cut = "old", true
	m.Apply(ev)
	if big.View != view {
		t.Error("replaying the event does not give the read its view again")
	}
}

// TestThrashGuardDenseSmallWindow: on a small window whose fixed prefix
// takes most of what the shed target leaves, every shrink sheds only the
// read before it and frees little (under a tenth of usable); new reads
// are progress all the same.
func TestThrashGuardDenseSmallWindow(t *testing.T) {
	eng := engineModel{fixed: 300, density: 2, overhead: 7}
	m := NewManager(NewHistory(strings.Repeat("the system prompt and its repo map\n", 210), simTools), 8192)
	m.StartTurn("task")
	b, _ := m.Gauge().Budget()
	shrinks, small := 0, 0
	for i := 0; i < 30 && !thrashing(m); i++ {
		eng.tokenize(m)
		if p := m.Prepare(); p.Shrink {
			if ev := m.Shrink(p, ""); ev != nil {
				shrinks++
				if ev.Before-ev.After < b.Usable/10 {
					small++
				}
			}
		}
		msgs := m.H.Messages()
		m.Sent()
		m.Observe(eng.prompt(msgs), 20)
		id := fmt.Sprint(i)
		m.AddRound(Message{ToolCalls: []ToolCall{{ID: id, Name: "read", Arguments: fmt.Sprintf(`{"path":"src/f%d.go"}`, i)}}}, 20)
		m.H.AddResult(readResult(id, fmt.Sprintf("src/f%d.go", i), 30))
	}
	t.Logf("%d shrinks, %d of them freeing under a tenth of usable; stopped %v", shrinks, small, thrashing(m))
	if small < ThrashLimit {
		t.Fatalf("setup: only %d shrinks freed little", small)
	}
	if stalled, why := m.Gauge().Stalled(); stalled {
		t.Errorf("a survey of new files was stopped: %s", why)
	}
}

func TestShedEntryOfACommand(t *testing.T) {
	var out strings.Builder
	out.WriteString("1\n")
	for i := range 30 {
		fmt.Fprintf(&out, "%6d src/strings/file_%d.go\n", 100+i, i)
	}
	out.WriteString("  3100 total\n(exit status 0)\n")
	r := &Result{Kind: KindBash, Text: out.String(), Summary: "bash `wc -l src/strings/*.go`: exit 0, 31 lines"}
	head, entry, ok := shedEntry(7, r, nil, 1000)
	if !ok || head != "1\n" {
		t.Fatalf("not shed, or kept %q in place", head)
	}
	for _, want := range []string{"`1`", "wc -l src/strings/*.go", "last line: `3100 total`"} {
		if !strings.Contains(entry, want) {
			t.Errorf("the entry lacks %q: %q", want, entry)
		}
	}
}

func TestShedEntryOfADiffACommandPrinted(t *testing.T) {
	var out strings.Builder
	out.WriteString("diff --git a/src/a.go b/src/a.go\nindex 1..2 100644\n--- a/src/a.go\n+++ b/src/a.go\n@@ -10,7 +10,8 @@ func A() {\n")
	for i := range 40 {
		fmt.Fprintf(&out, " \tx%d := compute(%d)\n", i, i)
	}
	out.WriteString("@@ -90,6 +91,6 @@ func B() {\n-\treturn 1\n+\treturn 2\n(exit status 0)\n")
	r := &Result{Kind: KindBash, Text: out.String(), Summary: "bash `git diff`: exit 0, 48 lines"}
	_, entry, ok := shedEntry(3, r, nil, 1000)
	if !ok {
		t.Fatal("not shed")
	}
	for _, want := range []string{"+++ b/src/a.go", "@@ -10,7 +10,8 @@", "@@ -90,6 +91,6 @@", "git diff"} {
		if !strings.Contains(entry, want) {
			t.Errorf("the entry lacks %q: %q", want, entry)
		}
	}
}

// TestShedHeadingSaysWhatHappened: rounds shed whole leave the view, and
// the heading says so rather than that each kept its first line.
func TestShedHeadingSaysWhatHappened(t *testing.T) {
	m := session(16000)
	m.StartTurn("task")
	var p Plan
	for i := 0; ; i++ {
		id := fmt.Sprint(i)
		m.AddRound(Message{ToolCalls: []ToolCall{call(id)}}, 20)
		m.H.AddResult(readResult(id, fmt.Sprintf("src/f%d.go", i), 60))
		if p = m.Prepare(); p.Shrink {
			break
		}
		send(m)
		if i > 200 {
			t.Fatal("never shrank")
		}
	}
	ev := m.Shrink(p, "")
	if ev == nil || ev.Fold != nil {
		t.Fatalf("setup: want a shed without a fold: %+v", ev)
	}
	if strings.Contains(ev.Message, shedHeading) || !strings.Contains(ev.Message, droppedHeading) {
		t.Errorf("rounds shed whole, but the heading says otherwise:\n%.400s", ev.Message)
	}
}
