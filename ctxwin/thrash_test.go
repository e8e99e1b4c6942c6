package ctxwin

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// drive runs rounds against the engine model: next picks each round's read
// (path and lines) given whether the last request was a shrink's; it
// returns the shrinks made and whether the guard stopped the turn.
func drive(t *testing.T, window, rounds int, next func(i int, shrunk bool) (path string, n int)) (shrinks int, stopped bool) {
	t.Helper()
	eng := engineModel{fixed: 900, density: 3, overhead: 7}
	m := session(window)
	m.StartTurn("task")
	shrunk := false
	for i := 0; i < rounds; i++ {
		eng.tokenize(m)
		if p := m.Prepare(); p.Shrink {
			if ev := m.Shrink(p, ""); ev != nil {
				shrinks++
				shrunk = true
			}
		}
		if thrashing(m) {
			return shrinks, true
		}
		msgs := m.H.Messages()
		m.Sent()
		m.Observe(eng.prompt(msgs), 20)
		id := fmt.Sprint(i)
		path, n := next(i, shrunk)
		shrunk = false
		m.AddRound(Message{ToolCalls: []ToolCall{{ID: id, Name: "read", Arguments: fmt.Sprintf(`{"path":%q}`, path)}}}, 20)
		m.H.AddResult(readResult(id, path, n))
	}
	return shrinks, thrashing(m)
}

func TestThrashGuardSeesProgress(t *testing.T) {
	// A survey of new files on a small window shrinks again and again,
	// every few rounds: that is progress.
	shrinks, stopped := drive(t, 16000, 60, func(i int, _ bool) (string, int) { return fmt.Sprintf("src/f%d.go", i), 120 })
	if stopped || shrinks < 6 {
		t.Errorf("a survey of new files: %d shrinks, stopped %v", shrinks, stopped)
	}
	// Re-reading the file that was just needed, once, then going on, is
	// progress too.
	shrinks, stopped = drive(t, 16000, 60, func(i int, shrunk bool) (string, int) {
		if shrunk {
			return "src/big.go", 300
		}
		return fmt.Sprintf("src/f%d.go", i), 120
	})
	if stopped || shrinks < 6 {
		t.Errorf("one re-read after each shrink among new reads: %d shrinks, stopped %v", shrinks, stopped)
	}
}

func TestThrashGuardStopsARereadLoop(t *testing.T) {
	m := session(16000)
	eng := engineModel{fixed: 900, density: 3, overhead: 7}
	m.StartTurn("task")
	shrunk := true
	for i := 0; i < 40 && !thrashing(m); i++ {
		eng.tokenize(m)
		if p := m.Prepare(); p.Shrink && m.Shrink(p, "") != nil {
			shrunk = true
		}
		msgs := m.H.Messages()
		m.Sent()
		m.Observe(eng.prompt(msgs), 20)
		id := fmt.Sprint(i)
		// The model reads big.go again after every shrink.
		path, n := fmt.Sprintf("src/f%d.go", i), 60
		if shrunk {
			path, n = "src/big.go", 700
		}
		shrunk = false
		m.AddRound(Message{ToolCalls: []ToolCall{{ID: id, Name: "read", Arguments: fmt.Sprintf(`{"path":%q}`, path)}}}, 20)
		m.H.AddResult(readResult(id, path, n))
	}
	if !thrashing(m) {
		t.Fatal("a model that re-reads big.go after every shrink was not stopped")
	}
	b, _ := m.Gauge().Budget()
	why := m.progress.Explain(b)
	if !strings.Contains(why, "src/big.go") || !strings.Contains(why, "start_line") || !strings.Contains(why, "larger window") {
		t.Errorf("the explanation does not name the file and what to do: %s", why)
	}
	m.StartTurn("another task")
	if thrashing(m) {
		t.Error("a new turn did not clear the guard")
	}
}

func TestFetchOverlaps(t *testing.T) {
	read := func(path string, a, b int) Fetch { return Fetch{Tool: "read", Path: path, Start: a, End: b} }
	call := func(tool, args string) Fetch { return Fetch{Tool: tool, Call: normalArgs(args)} }
	for _, c := range []struct {
		f, g Fetch
		want bool
	}{
		{read("a.go", 1, 100), read("a.go", 50, 150), true},
		{read("a.go", 1, 100), read("a.go", 101, 200), false},
		{read("a.go", 0, 0), read("a.go", 300, 400), true},
		{read("a.go", 1, 579), read("a.go", 1, 579), true},
		{read("a.go", 215, 256), read("a.go", 1, 579), false}, // a range of a file shed whole: as advised
		{read("a.go", 1, 300), read("a.go", 1, 579), true},
		{read("a.go", 1, 200), read("a.go", 0, 0), false},
		{read("a.go", 0, 0), read("a.go", 0, 0), true},
		{read("a.go", 1, 100), read("b.go", 1, 100), false},
		{call("bash", `{"command":"wc -l x", "timeout_s": 5}`), call("bash", `{"timeout_s":5,"command":"wc -l x"}`), true},
		{call("grep", `{"pattern":"a"}`), call("grep", `{"pattern":"b"}`), false},
		{call("grep", `{"pattern":"a"}`), call("glob", `{"pattern":"a"}`), false},
	} {
		if got := c.f.overlaps(c.g); got != c.want {
			t.Errorf("%+v overlaps %+v = %v", c.f, c.g, got)
		}
	}
}

// TestRemovedByCountsOnlyWhatLeftTheView: a shrink removes what it takes
// out of view, not what an earlier shrink had shed. Counting a fold over a
// shed read as its removal made the guard stop a survey of a small package,
// where the model reads the same file again now and then (the bench,
// session 17 at 16k: three reads of encoding/hex/hex.go in six rounds).
func TestRemovedByCountsOnlyWhatLeftTheView(t *testing.T) {
	round := func(m *Manager, id, path string, n int) int {
		m.AddRound(Message{ToolCalls: []ToolCall{{ID: id, Name: "read", Arguments: fmt.Sprintf(`{"path":%q}`, path)}}}, 20)
		m.H.AddResult(readResult(id, path, n))
		return len(m.H.Items) - 1
	}
	paths := func(fs []Fetch) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Path)
		}
		return out
	}
	m := session(16000)
	m.StartTurn("task")
	a := round(m, "1", "src/a.go", 200)
	b := round(m, "2", "src/b.go", 100)
	round(m, "3", "src/c.go", 50)
	shed := &Event{Shed: []ShedChange{{Item: a, Result: 0, View: "Read src/a.go lines 1-200 of 200"}}}
	m.Apply(shed)
	if got := paths(removedBy(m.H, shed, m.H.Folded)); !slices.Equal(got, []string{"src/a.go"}) {
		t.Fatalf("a shed of a.go removed %v", got)
	}
	round(m, "4", "src/d.go", 50)
	folded := m.H.Folded
	fold := &Event{Fold: &FoldChange{Upto: b + 1}}
	m.Apply(fold)
	if got := paths(removedBy(m.H, fold, folded)); !slices.Equal(got, []string{"src/b.go"}) {
		t.Errorf("a fold over the shed a.go and b.go removed %v, want b.go only", got)
	}
}
