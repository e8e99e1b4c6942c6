package ctxwin

import (
	"fmt"
	"strings"
	"testing"
)

// declsSource is a file of n lines with a declaration every 10 lines, at
// lines 1, 11, 21, ...: "func F<line>() {" (version v changes the first
// declaration's line).
func declsSource(n int, v string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		switch {
		case i == 1:
			fmt.Fprintf(&b, "func First%s() {\n", v)
		case i%10 == 1:
			fmt.Fprintf(&b, "func F%d() {\n", i)
		default:
			fmt.Fprintf(&b, "\tx := %d // some code in the body of the function\n", i)
		}
	}
	return b.String()
}

// sourceRead is a read of lines from-to of src as the read tool shows it.
func sourceRead(id, path, src string, from, to int) *Result {
	all := strings.Split(strings.TrimSuffix(src, "\n"), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "%s lines %d-%d of %d\n", path, from, to, len(all))
	for n := from; n <= to; n++ {
		fmt.Fprintf(&b, "%4d→%s\n", n, all[n-1])
	}
	return &Result{CallID: id, Tool: "read", Kind: KindRead, Text: b.String(), Path: path, Source: []byte(src),
		StartLine: from, EndLine: to, TotalLines: len(all), Summary: fmt.Sprintf("Read %s lines %d-%d of %d", path, from, to, len(all))}
}

// declOutliner outlines the declarations a read shows, as agent's
// outliner does for declsSource's files.
func declOutliner(r *Result, budget int) string {
	var b strings.Builder
	for n, l := range strings.Split(string(r.Source), "\n") {
		if strings.HasPrefix(l, "func ") && n+1 >= r.StartLine && n+1 <= r.EndLine {
			fmt.Fprintf(&b, "L%d-%d %s\n", n+1, n+10, strings.TrimSuffix(l, " {"))
		}
	}
	return b.String()
}

// shedAmong grows a session of reads of filler files around the given
// reads (first, at the start; later, after ten filler rounds) until a shed,
// and returns its event.
func shedAmong(t *testing.T, first, later []*Result) (*Manager, *Event) {
	t.Helper()
	m := session(32000)
	m.Setup().Outliner(declOutliner)
	m.StartTurn("the task")
	send(m)
	add := func(r *Result) {
		m.H.AddRound(Message{Content: "reading " + r.Path, ToolCalls: []ToolCall{call(r.CallID)}})
		m.H.AddResult(r)
	}
	for _, r := range first {
		add(r)
		send(m)
	}
	for i := 0; i < 500; i++ {
		if i == 10 {
			for _, r := range later {
				add(r)
				send(m)
			}
		}
		add(sourceRead(fmt.Sprintf("f%d", i), fmt.Sprintf("src/filler%d.go", i), declsSource(120, ""), 1, 120))
		if p := m.Prepare(); p.Shrink {
			ev := m.Shrink(p, "")
			if ev == nil || ev.Fold != nil {
				t.Fatalf("want a shed, got %+v", ev)
			}
			return m, ev
		}
		send(m)
	}
	t.Fatal("no shed in 500 rounds")
	return nil, nil
}

// entryOf is the entry of the message for the result with call id.
func entryOf(t *testing.T, m *Manager, ev *Event, id string) string {
	t.Helper()
	for _, it := range m.H.Items {
		for _, r := range it.Results {
			if r.CallID != id {
				continue
			}
			if !r.Shed {
				t.Fatalf("the shed kept %s", id)
			}
			head := fmt.Sprintf("- round %d: `%s`", it.Round, strings.TrimSuffix(r.View, "\n"))
			at := strings.Index(ev.Message, head)
			if at < 0 {
				t.Fatalf("no entry %q in:\n%s", head, ev.Message)
			}
			rest := ev.Message[at:]
			if next := strings.Index(rest[1:], "\n- round "); next >= 0 {
				rest = rest[:next+1]
			}
			return rest
		}
	}
	t.Fatalf("no result %s", id)
	return ""
}

// TestShedEntryNamesTheReadInView: a shed read whose declarations a newer
// read of the same file, kept in view, shows at the same lines names that
// read instead of listing its outline; one of a file changed since lists
// its outline.
func TestShedEntryNamesTheReadInView(t *testing.T) {
	same := declsSource(60, "")
	m, ev := shedAmong(t,
		[]*Result{sourceRead("a1", "src/a.go", same, 1, 60), sourceRead("b1", "src/b.go", declsSource(60, "Old"), 1, 60)},
		[]*Result{sourceRead("a2", "src/a.go", same, 1, 60), sourceRead("b2", "src/b.go", declsSource(60, "New"), 1, 60)})
	for _, id := range []string{"a2", "b2"} {
		if r := findResult(m, id); r.Shed {
			t.Fatalf("the shed took the newer read %s too; the test needs it kept:\n%s", id, ev.Message)
		}
	}
	a := entryOf(t, m, ev, "a1")
	if !strings.Contains(a, "outline: its declarations are in view in round ") || strings.Contains(a, "L11-20 func F11()") {
		t.Errorf("src/a.go's entry lists an outline the newer read shows:\n%s", a)
	}
	round := 0
	for _, it := range m.H.Items {
		for _, r := range it.Results {
			if r.CallID == "a2" {
				round = it.Round
			}
		}
	}
	if want := fmt.Sprintf("in view in round %d's read", round); !strings.Contains(a, want) {
		t.Errorf("src/a.go's entry does not say %q:\n%s", want, a)
	}
	b := entryOf(t, m, ev, "b1")
	if !strings.Contains(b, "outline:\n  L1-10 func FirstOld()\n  L11-20 func F11()") {
		t.Errorf("src/b.go changed since its shed read, yet its entry lost its outline:\n%s", b)
	}
	if got, want := m.Gauge().Size(), ev.After; got > want+want/50 || got < want-want/50 {
		t.Errorf("the request is %d tokens, the shed priced it at %d", got, want)
	}
}

// TestShedEntryWithinAnother: of two reads of one file shed together, the
// one whose outline the other's holds names that entry; the other lists
// its outline.
func TestShedEntryWithinAnother(t *testing.T) {
	src := declsSource(300, "")
	m, ev := shedAmong(t, []*Result{sourceRead("p", "src/a.go", src, 11, 250), sourceRead("w", "src/a.go", src, 1, 300)}, nil)
	p, w := entryOf(t, m, ev, "p"), entryOf(t, m, ev, "w")
	round := 0
	for _, it := range m.H.Items {
		if len(it.Results) > 0 && it.Results[0].CallID == "w" {
			round = it.Round
		}
	}
	if want := fmt.Sprintf("outline: within round %d's below", round); !strings.Contains(p, want) {
		t.Errorf("the part's entry does not say %q:\n%s", want, p)
	}
	if !strings.Contains(w, "outline:\n  L1-10 func First()\n  L11-20 func F11()\n  L21-30 func F21()\n  L31-40 func F31()") {
		t.Errorf("the whole file's entry lost its outline:\n%s", w)
	}
	if n := strings.Count(p+w, "func F21()"); n != 1 {
		t.Errorf("the entries of src/a.go list F21 %d times, want once:\n%s%s", n, p, w)
	}
}

func findResult(m *Manager, id string) *Result {
	for _, it := range m.H.Items {
		for _, r := range it.Results {
			if r.CallID == id {
				return r
			}
		}
	}
	return nil
}
