package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestGenerateBugfix writes a short bug-fix session twice from one seed:
// the same session; each task runs the tests and they fail, fixes each bug
// with the edit tool, reads the fixed lines again and ends with the tests
// passing; every line its answer cites is one the task's reads showed,
// numbered as the read tool numbers it; and the workspace ends as the Go
// distribution has it.
func TestGenerateBugfix(t *testing.T) {
	src, err := loadSource()
	if err != nil {
		t.Skipf("no Go distribution to read: %v", err)
	}
	dir := t.TempDir()
	a, err := GenerateKind(src, dir, 4, 40, KindBugfix)
	if err != nil {
		t.Fatal(err)
	}
	b, err := GenerateKind(src, t.TempDir(), 4, 40, KindBugfix)
	if err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Fatal("one seed wrote two different sessions")
	}
	if a.Kind != KindBugfix || a.Rounds() < 40 || a.Files[testScript] == "" {
		t.Fatalf("kind %q, %d rounds, files %d", a.Kind, a.Rounds(), len(a.Files))
	}
	fixed := map[string]bool{}
	for ti, turn := range a.Turns {
		checkBugfixTurn(t, ti, turn, fixed)
	}
	// The tasks fixed every bug they planted (the later tasks' are planted
	// too, and not yet fixed).
	ws := filepath.Join(dir, "ws")
	for p := range fixed {
		data, err := os.ReadFile(filepath.Join(ws, p))
		if err != nil || string(data) != string(src.files[p]) {
			t.Errorf("%s differs from the distribution's after its fix (%v)", p, err)
		}
	}
	if len(fixed) < 2*len(a.Turns) {
		t.Errorf("%d files fixed in %d tasks", len(fixed), len(a.Turns))
	}
}

func checkBugfixTurn(t *testing.T, ti int, turn Turn, fixed map[string]bool) {
	t.Helper()
	if n := len(turn.Steps); n < minTurnSteps || n > maxTurnSteps {
		t.Errorf("turn %d has %d steps", ti, n)
	}
	var shown strings.Builder
	var bash []string
	edits := 0
	for si, st := range turn.Steps[:len(turn.Steps)-1] {
		if len(st.Calls) != 1 || len(st.Outputs) != 1 {
			t.Fatalf("turn %d step %d: %d calls, %d outputs", ti, si, len(st.Calls), len(st.Outputs))
		}
		c, out := st.Calls[0], st.Outputs[0]
		if c.ID != callID(ti, si, 0) || !json.Valid([]byte(c.Args)) || out == "" {
			t.Errorf("turn %d step %d: %+v", ti, si, c)
		}
		shown.WriteString(out + "\n")
		switch c.Name {
		case "bash":
			if strings.Contains(c.Args, "sh "+testScript) {
				bash = append(bash, out)
			}
		case "edit":
			edits++
			var args struct{ Path string }
			json.Unmarshal([]byte(c.Args), &args)
			fixed[args.Path] = true
		}
	}
	if len(bash) < 2 || !strings.Contains(bash[0], "--- FAIL: ") || !strings.Contains(bash[0], "(exit status 1)") ||
		strings.Count(bash[0], "\n") < 10 || strings.Contains(bash[len(bash)-1], "FAIL") || !strings.Contains(bash[len(bash)-1], "(exit status 0)") {
		t.Errorf("turn %d: the tests do not fail at first and pass at last:\n%s\n...\n%s", ti, bash[0], bash[len(bash)-1])
	}
	if edits < 2 || edits > 3 {
		t.Errorf("turn %d: %d edits", ti, edits)
	}
	answer := turn.Steps[len(turn.Steps)-1]
	if len(answer.Calls) != 0 || len(turn.Facts) != 3*edits+1 {
		t.Errorf("turn %d: answer with %d calls, %d facts for %d edits", ti, len(answer.Calls), len(turn.Facts), edits)
	}
	for _, f := range turn.Facts {
		if v := verbatimInView(f, shown.String()); v != 1 {
			t.Errorf("turn %d: the answer cites %s:%d %q, which the task's reads show only %.2f of", ti, f.Path, f.Line, f.Lines, v)
		}
		if !strings.Contains(answer.Content, f.Path+":"+strconv.Itoa(f.Line)) && !strings.Contains(answer.Content, f.Path+" lines "+strconv.Itoa(f.Line)+"-") {
			t.Errorf("turn %d: the answer does not cite %s:%d", ti, f.Path, f.Line)
		}
	}
}
