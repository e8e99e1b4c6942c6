package ctxwin

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Table tests of the recap (recap.go): what it lists of the items a fold
// takes out, how it absorbs the recap before, and how it fits its budget.

func TestMergeRange(t *testing.T) {
	tests := []struct {
		have []LineRange
		add  LineRange
		want []LineRange
	}{
		{nil, LineRange{1, 10}, []LineRange{{1, 10}}},
		{[]LineRange{{1, 10}}, LineRange{11, 20}, []LineRange{{1, 20}}}, // adjacent
		{[]LineRange{{1, 10}}, LineRange{5, 20}, []LineRange{{1, 20}}},  // overlapping
		{[]LineRange{{1, 10}}, LineRange{12, 20}, []LineRange{{1, 10}, {12, 20}}},
		{[]LineRange{{12, 20}}, LineRange{1, 10}, []LineRange{{1, 10}, {12, 20}}}, // sorted
		{[]LineRange{{1, 10}, {20, 30}}, LineRange{9, 21}, []LineRange{{1, 30}}},  // bridges two
		{[]LineRange{{1, 10}}, LineRange{3, 4}, []LineRange{{1, 10}}},             // inside
		{nil, LineRange{7, 2}, []LineRange{{7, 7}}},                               // backwards: one line
	}
	for _, tt := range tests {
		have := append([]LineRange(nil), tt.have...)
		if got := mergeRange(have, tt.add); !slices.Equal(got, tt.want) {
			t.Errorf("mergeRange(%v, %v) = %v, want %v", tt.have, tt.add, got, tt.want)
		}
	}
}

func TestMergeFiles(t *testing.T) {
	older := []FileTouch{{Path: "a.go", Read: []LineRange{{1, 10}}}, {Path: "b.go", Edited: true}}
	newer := []FileTouch{{Path: "c.go", Written: true}, {Path: "a.go", Read: []LineRange{{11, 20}}, Edited: true}}
	got := mergeFiles(older, newer)
	want := []FileTouch{{Path: "a.go", Read: []LineRange{{1, 20}}, Edited: true}, {Path: "b.go", Edited: true}, {Path: "c.go", Written: true}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("mergeFiles = %v, want %v", got, want)
	}
	if len(older[0].Read) != 1 || older[0].Read[0] != (LineRange{1, 10}) || older[0].Edited {
		t.Errorf("mergeFiles changed the older touches: %v", older)
	}
}

func TestFileTouchString(t *testing.T) {
	tests := []struct {
		f    FileTouch
		want string
	}{
		{FileTouch{Path: "a.go"}, "a.go"},
		{FileTouch{Path: "a.go", Read: []LineRange{{1, 10}, {20, 30}}}, "a.go: read lines 1-10, 20-30"},
		{FileTouch{Path: "a.go", Written: true}, "a.go: written"},
		{FileTouch{Path: "a.go", Edited: true}, "a.go: edited"},
		{FileTouch{Path: "a.go", Read: []LineRange{{1, 2}}, Written: true, Edited: true}, "a.go: read lines 1-2; written; edited"},
	}
	for _, tt := range tests {
		if got := tt.f.String(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.f, got, tt.want)
		}
	}
}

// TestRecapEventLines: what happened lists what the other lists do not
// say: an error, an edit, a command, a reply; a read with its path, a
// search and a page with its address are listed elsewhere.
func TestRecapEventLines(t *testing.T) {
	tests := []struct {
		r        Result
		listed   bool
		wantLine string
	}{
		{Result{Kind: KindRead, Path: "a.go", Summary: "Read a.go lines 1-3 of 3"}, true, ""},
		{Result{Kind: KindRead, Tool: "read", Text: "x\ny"}, false, "read: x"},
		{Result{Kind: KindGrep, Summary: `grep "x": 2 matches`}, true, ""},
		{Result{Kind: KindGlob, Summary: "glob *.go: 3 files"}, true, ""},
		{Result{Kind: KindFetch, URL: "https://example.com"}, true, ""},
		{Result{Kind: KindFetch, Tool: "fetch_url", Text: "no url"}, false, "fetch_url: no url"},
		{Result{Kind: KindBash, Summary: "bash `go test`: exit 1"}, false, "bash `go test`: exit 1"},
		{Result{Kind: KindEdit, Path: "a.go", Summary: "Edited a.go (1 hunk)"}, false, "Edited a.go (1 hunk)"},
		{Result{Kind: KindRead, Path: "a.go", IsError: true, Summary: "read a.go: failed", Text: "Error: no such file\nmore"}, false,
			"read a.go: failed (error: Error: no such file)"},
	}
	for _, tt := range tests {
		r := tt.r
		if got := listedElsewhere(&r); got != tt.listed {
			t.Errorf("%+v listed elsewhere: %v, want %v", r, got, tt.listed)
		}
		if tt.wantLine != "" {
			if got := eventLine(&r); got != tt.wantLine {
				t.Errorf("eventLine(%+v) = %q, want %q", r, got, tt.wantLine)
			}
		}
	}
}

func TestRecapTextHelpers(t *testing.T) {
	if got := shortLine("first line\nsecond", 100); got != "first line" {
		t.Errorf("shortLine kept %q", got)
	}
	if got := shortLine("abcdefghij", 4); got != "abcd…" {
		t.Errorf("shortLine cut to %q", got)
	}
	if got := shortLine("ééééé", 3); got != "é…" {
		t.Errorf("shortLine split a character: %q", got)
	}
	if got := quote("  several   words\nover lines ", 100); got != `"several words over lines"` {
		t.Errorf("quote gave %s", got)
	}
	if got := quote("abcdefghij", 5); got != `"abcde…"` {
		t.Errorf("quote cut to %s", got)
	}
	if got := capText("short", 10); got != "short" {
		t.Errorf("capText changed a short text: %q", got)
	}
	long := lines(100, "note")
	got := capText(long, 600)
	if len(got) > 700 || !strings.HasPrefix(got, "note line 1 ") || !strings.Contains(got, "note line 100 ") || !strings.Contains(got, "bytes cut to fit the recap") {
		t.Errorf("capText kept %d bytes:\n%s", len(got), got)
	}
	if got := prependUnique([]string{"b"}, "a"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("prependUnique = %q", got)
	}
	if got := prependUnique([]string{"a", "b"}, "b"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("prependUnique added a duplicate: %q", got)
	}
	if got := appendUnique([]string{"a"}, "b"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("appendUnique = %q", got)
	}
	if got := appendUnique([]string{"a", "b"}, "a"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("appendUnique added a duplicate: %q", got)
	}
}

func TestWriteList(t *testing.T) {
	tests := []struct {
		lines []string
		share int
		want  string
	}{
		{nil, 100, ""},
		{[]string{"one", "two"}, 100, "\n## T\n- one\n- two\n"},
		{[]string{"one", "two", "three"}, 12, "\n## T\n- one\n- two\n- … 1 more\n"},
		{[]string{"a long line"}, 5, ""}, // nothing fits: no title either
	}
	for _, tt := range tests {
		var b strings.Builder
		writeList(&b, "T", tt.lines, tt.share)
		if got := b.String(); got != tt.want {
			t.Errorf("writeList(%q, %d) = %q, want %q", tt.lines, tt.share, got, tt.want)
		}
	}
}

// recapItems is a folded turn: its prompt, a read, a search, a fetch, an
// edit, a failed command and a reply.
func recapItems(turn, round int) []*Item {
	return []*Item{
		{Turn: turn, Prompt: fmt.Sprintf("TASK %d: fix the parser", turn)},
		{Turn: turn, Round: round, Assistant: Message{Content: "reading the parser"}, Results: []*Result{
			{Kind: KindRead, Tool: "read", Path: "parse.go", StartLine: 1, EndLine: 40, Text: "package parse"},
			{Kind: KindGrep, Tool: "grep", Query: "Parse", Summary: `grep "Parse": 4 matches`},
			{Kind: KindFetch, Tool: "fetch_url", URL: "https://example.com/spec"},
		}},
		{Turn: turn, Round: round + 1, Assistant: Message{Content: "editing"}, Results: []*Result{
			{Kind: KindEdit, Tool: "edit", Path: "parse.go", Summary: "Edited parse.go (1 hunk)"},
			{Kind: KindBash, Tool: "bash", Summary: "bash `go test`: exit 1", IsError: true, Text: "FAIL parse"},
			{Kind: KindRead, Tool: "read", Path: "parse.go", StartLine: 41, EndLine: 60, Text: "func Parse"},
		}},
	}
}

// TestBuildRecap: the recap of a folded turn lists its files with the
// lines read, the searches and pages, what happened newest first, and
// takes the prompt as the task while its turn runs, as a request after.
func TestBuildRecap(t *testing.T) {
	tests := []struct {
		name    string
		current int
		task    string
		request []string
	}{
		{"its turn runs", 1, "TASK 1: fix the parser", nil},
		{"its turn is over", 2, "", []string{"TASK 1: fix the parser"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := buildRecap(nil, recapItems(1, 1), "the note", tt.current, false, true)
			if rc.Task != tt.task || !slices.Equal(rc.Requests, tt.request) {
				t.Errorf("task %q, requests %q; want %q, %q", rc.Task, rc.Requests, tt.task, tt.request)
			}
			if got, want := fmt.Sprint(rc.Files), fmt.Sprint([]FileTouch{{Path: "parse.go", Read: []LineRange{{1, 60}}, Edited: true}}); got != want {
				t.Errorf("files %s, want %s", got, want)
			}
			if !slices.Equal(rc.Searches, []string{`grep "Parse": 4 matches`}) || !slices.Equal(rc.Pages, []string{"https://example.com/spec"}) {
				t.Errorf("searches %q, pages %q", rc.Searches, rc.Pages)
			}
			wantEvents := []string{
				"r2 bash `go test`: exit 1 (error: FAIL parse)",
				"r2 Edited parse.go (1 hunk)",
				`r2 assistant: "editing"`,
				`r1 assistant: "reading the parser"`,
			}
			if len(rc.Events) != len(wantEvents)+1 || !slices.Equal(rc.Events[:len(wantEvents)], wantEvents) {
				t.Errorf("events %q, want %q and the turn's start", rc.Events, wantEvents)
			}
			if rc.FirstRound != 1 || rc.LastRound != 2 || !rc.NoteAbove || rc.Note != "the note" {
				t.Errorf("rounds %d-%d, note %q above %v", rc.FirstRound, rc.LastRound, rc.Note, rc.NoteAbove)
			}
		})
	}
}

// TestRecapAbsorb: a new recap takes up the one before it: its note as an
// earlier note, its events after the new ones, its files merged, its task
// kept while its turn runs and an earlier request after.
func TestRecapAbsorb(t *testing.T) {
	tests := []struct {
		name     string
		current  int
		task     string
		requests []string
	}{
		{"the same turn", 1, "TASK 1: fix the parser", nil},
		{"a later turn", 2, "", []string{"TASK 1: fix the parser"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := buildRecap(nil, recapItems(1, 1), "old note", 1, false, true)
			items := []*Item{{Turn: tt.current, Round: 3, Assistant: Message{Content: "more"}, Results: []*Result{
				{Kind: KindRead, Tool: "read", Path: "lex.go", StartLine: 1, EndLine: 9},
				{Kind: KindRead, Tool: "read", Path: "parse.go", StartLine: 100, EndLine: 120},
			}}}
			rc := buildRecap(old, items, "new note", tt.current, tt.current == 2, true)
			if rc.Task != tt.task || !slices.Equal(rc.Requests, tt.requests) {
				t.Errorf("task %q, requests %q; want %q, %q", rc.Task, rc.Requests, tt.task, tt.requests)
			}
			if !slices.Equal(rc.EarlierNotes, []string{"old note"}) || rc.Note != "new note" {
				t.Errorf("note %q, earlier notes %q", rc.Note, rc.EarlierNotes)
			}
			if rc.Events[0] != `r3 assistant: "more"` || !slices.Contains(rc.Events, `r1 assistant: "reading the parser"`) {
				t.Errorf("events %q: want the new first, then the old", rc.Events)
			}
			want := []FileTouch{{Path: "parse.go", Read: []LineRange{{1, 60}, {100, 120}}, Edited: true}, {Path: "lex.go", Read: []LineRange{{1, 9}}}}
			if fmt.Sprint(rc.Files) != fmt.Sprint(want) {
				t.Errorf("files %v, want %v", rc.Files, want)
			}
			if rc.FirstRound != 1 || rc.LastRound != 3 {
				t.Errorf("rounds %d-%d, want 1-3", rc.FirstRound, rc.LastRound)
			}
		})
	}
}

// TestRecapRender: the recap's text says what it folded, refers to the
// note and the task where they stay, keeps a task out of view verbatim,
// and keeps its lists within the budget, newest events first.
func TestRecapRender(t *testing.T) {
	tests := []struct {
		name      string
		note      string
		noteAbove bool
		taskAbove bool
		current   int
		budget    int
		want      []string
		not       []string
	}{
		{"note and task above", "the note", true, true, 3, 4000,
			[]string{"Rounds 1-2 of this session", "Your note above", "The request of turn 3 above is the task", "## Files touched", "parse.go: read lines 1-60; edited"},
			[]string{"## Note written before the fold", "## Task (verbatim)"}},
		{"the note in the recap", "the note", false, true, 3, 4000,
			[]string{"## Note written before the fold\nthe note\n"}, []string{"Your note above"}},
		{"the task verbatim", "", false, false, 1, 4000,
			[]string{"## Task (verbatim)\nTASK 1: fix the parser\n"}, []string{"Your note above", "above is the task"}},
		{"a small budget drops the lists", "", false, true, 3, 150,
			[]string{"<recap>\nRounds 1-2", "</recap>"}, []string{"## Files touched", "## What happened"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := buildRecap(nil, recapItems(1, 1), tt.note, tt.current, tt.taskAbove, tt.noteAbove)
			rc.render(tt.budget)
			recapHolds(t, rc, tt.want, tt.not)
			if !strings.HasPrefix(rc.Text, "<recap>\n") || !strings.HasSuffix(rc.Text, "</recap>") {
				t.Errorf("not a recap:\n%s", rc.Text)
			}
		})
	}
}

// recapHolds checks that the recap's text holds every string of want and
// none of not.
func recapHolds(t *testing.T, rc *Recap, want, not []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(rc.Text, w) {
			t.Errorf("the recap lacks %q:\n%s", w, rc.Text)
		}
	}
	for _, n := range not {
		if strings.Contains(rc.Text, n) {
			t.Errorf("the recap has %q:\n%s", n, rc.Text)
		}
	}
}
