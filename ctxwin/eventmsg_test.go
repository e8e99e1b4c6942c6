package ctxwin

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The message the model reads after a shrink, as golden files
// (testdata/message/*.txtar; go test ./ctxwin -run TestEventMessageGolden
// -update rewrites them): a shed, a fold, a shed and a fold in one event,
// and the same at a tiny window. Each file holds the event in short, the
// note that stays before the message, and the message.

// ctxwin depends on the standard library alone (TestImportsOnlyStdlib), and
// golang.org/x/tools/txtar is not a module this repository requires: the
// few lines below read and write the same format (a "-- name --" line
// opens each section).

// txtarFile is one section of a txtar archive.
type txtarFile struct{ name, data string }

// parseTxtar reads the sections of a txtar archive; the text before the
// first is its comment, left out.
func parseTxtar(data string) []txtarFile {
	var files []txtarFile
	for _, line := range strings.SplitAfter(data, "\n") {
		trimmed := strings.TrimRight(line, "\n")
		if strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") && len(trimmed) > 6 {
			files = append(files, txtarFile{name: trimmed[3 : len(trimmed)-3]})
			continue
		}
		if len(files) > 0 {
			files[len(files)-1].data += line
		}
	}
	return files
}

// formatTxtar writes sections as a txtar archive after the comment.
func formatTxtar(comment string, files []txtarFile) string {
	var b strings.Builder
	b.WriteString(comment)
	for _, f := range files {
		fmt.Fprintf(&b, "-- %s --\n%s", f.name, f.data)
		if f.data != "" && !strings.HasSuffix(f.data, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

func TestTxtarRoundTrip(t *testing.T) {
	files := []txtarFile{{"a", "one\n-- not a header\n"}, {"b c", "two\nthree\n"}, {"empty", ""}}
	got := parseTxtar(formatTxtar("a comment\n", files))
	if fmt.Sprint(got) != fmt.Sprint(files) {
		t.Errorf("round trip gave %q, want %q", got, files)
	}
}

// summary is the event in short: its reason, its sheds by round, its fold,
// and the request's size before and after.
func summary(m *Manager, ev *Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "reason: %s\n", ev.Reason)
	var sheds []string
	for _, c := range ev.Shed {
		round := m.H.Items[c.Item].Round
		switch c.Result {
		case ShedReasoning:
			sheds = append(sheds, fmt.Sprintf("round %d's reasoning", round))
		case ShedArguments:
			sheds = append(sheds, fmt.Sprintf("round %d's arguments", round))
		case ShedRound:
			sheds = append(sheds, fmt.Sprintf("round %d whole", round))
		default:
			sheds = append(sheds, fmt.Sprintf("round %d result %d", round, c.Result))
		}
	}
	if len(sheds) > 0 {
		fmt.Fprintf(&b, "shed: %s\n", strings.Join(sheds, ", "))
	}
	if f := ev.Fold; f != nil {
		fmt.Fprintf(&b, "fold: %d rounds, up to item %d, keeping %v; recap %d tokens\n", f.Rounds, f.Upto, f.Keep, f.RecapTokens)
	}
	fmt.Fprintf(&b, "tokens: %d before, %d after\n", ev.Before, ev.After)
	return b.String()
}

// messageCases are the shrinks whose message has a golden file.
var messageCases = []struct {
	name   string
	window int
	note   string
	rounds []rd
}{
	{"shed", 12000, "",
		[]rd{{think: 20, reads: []int{120, 3}}, {reads: []int{40}}, {think: 10, reads: []int{120}}, {reads: []int{60, 3}}, {reads: []int{3}}}},
	{"fold", 8000, "NOTE: the parser is in src/r1_0.go; the lexer is next.",
		[]rd{{say: 20, reads: []int{3}}, {say: 20, reads: []int{3}}, {say: 20, reads: []int{3}}, {say: 20, reads: []int{3}},
			{say: 20, reads: []int{3}}, {say: 20, reads: []int{3}}, {reads: []int{3}}}},
	{"shed-fold", 8000, "NOTE: the parser is in src/r1_0.go; the lexer is next.",
		[]rd{{say: 20, reads: []int{3}}, {say: 20, reads: []int{3}}, {say: 20, reads: []int{3}}, {say: 20, reads: []int{3}},
			{say: 20, reads: []int{3}}, {think: 10, reads: []int{120, 3}}, {reads: []int{3}}}},
	{"tiny-window", 4096, "NOTE: the parser is in src/r1_0.go.",
		[]rd{{say: 20, reads: []int{3}}, {say: 20, reads: []int{3}}, {say: 20, reads: []int{3}}, {say: 20, reads: []int{3}},
			{say: 20, reads: []int{3}}, {think: 10, reads: []int{120, 3}}, {reads: []int{3}}}},
}

func TestEventMessageGolden(t *testing.T) {
	for _, tc := range messageCases {
		t.Run(tc.name, func(t *testing.T) {
			m := history(tc.window, tc.rounds...)
			b, _ := m.Gauge().Budget()
			d := m.plan(b, ReasonShedPoint, tc.note)
			if d == nil {
				t.Fatal("no shrink")
			}
			stepMessage(d)
			ev := d.ev
			files := []txtarFile{{"event", summary(m, ev)}, {"note", ev.Note}, {"message", ev.Message}}
			comment := fmt.Sprintf("The message after a shrink at a window of %d tokens (%s).\n", tc.window, tc.name)
			got := formatTxtar(comment, files)
			path := filepath.Join("testdata", "message", tc.name+".txtar")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := parseTxtar(string(data))
			for i, f := range parseTxtar(got) {
				if i >= len(want) || want[i].name != f.name {
					t.Fatalf("%s: section %q is not in the golden", path, f.name)
				}
				if want[i].data != f.data {
					t.Errorf("%s: %s differs:\ngot:\n%s\nwant:\n%s", path, f.name, f.data, want[i].data)
				}
			}
			if !bytes.Equal(data, []byte(got)) && !t.Failed() {
				t.Errorf("%s differs outside its sections", path)
			}
		})
	}
}
