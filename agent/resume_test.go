package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/engine"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// testSeed is the seed of the randomized tests: REIKA_TEST_SEED, else a
// fixed one. The tests log it.
func testSeed(t *testing.T) int64 {
	if s := os.Getenv("REIKA_TEST_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("REIKA_TEST_SEED: %v", err)
		}
		return n
	}
	return 17
}

// sessionLogs lists the session logs under a state directory.
func sessionLogs(t *testing.T, state string) []string {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(state, "sessions", "*", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return logs
}

// onlyLog is the one session log under a state directory.
func onlyLog(t *testing.T, state string) string {
	t.Helper()
	logs := sessionLogs(t, state)
	if len(logs) != 1 {
		t.Fatalf("%d session logs, want 1: %v", len(logs), logs)
	}
	return logs[0]
}

// lineEnds are the offsets just past each line of a log.
func lineEnds(data []byte) []int {
	var ends []int
	for i, b := range data {
		if b == '\n' {
			ends = append(ends, i+1)
		}
	}
	return ends
}

// logRecord is what these tests read of a log line.
type logRecord struct {
	Kind   string          `json:"t"`
	Prompt string          `json:"prompt"`
	Reply  *ctxwin.Message `json:"reply"`
}

// readRecords parses every line of a log; a line that does not parse
// fails the test.
func readRecords(t *testing.T, path string) []logRecord {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []logRecord
	for i, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if line[len(line)-1] != '\n' {
			t.Fatalf("%s: line %d has no newline: %.80q", path, i+1, line)
		}
		var r logRecord
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%s: line %d: %v: %.80q", path, i+1, err, line)
		}
		out = append(out, r)
	}
	return out
}

// resumer starts agents that resume the session under state against srv.
type resumer struct {
	t     *testing.T
	srv   *enginetest.Server
	root  string
	state string
	ev    agent.Events
}

func (r resumer) start() *agent.Agent {
	r.t.Helper()
	model, err := engine.New(engine.Config{BaseURL: r.srv.URL(), CacheDir: r.t.TempDir(), ModelsURL: "http://127.0.0.1:1/never"})
	if err != nil {
		r.t.Fatal(err)
	}
	a, err := agent.New(agent.Options{Workspace: diskWorkspace{root: r.root}, Model: model, StateDir: r.state, Resume: true,
		Events: r.ev, Settings: agent.Settings{Approve: agent.ApproveAll}})
	if err != nil {
		r.t.Fatal(err)
	}
	return a
}

// ask runs one turn in a fresh agent that resumes the session, and
// closes it.
func (r resumer) ask(prompt string) agent.AskResult {
	r.t.Helper()
	a := r.start()
	defer a.Close()
	return a.Ask(context.Background(), agent.AskParams{Prompt: prompt})
}

// answerResumes answers the prompts of resumed turns with text, and runs
// script otherwise.
func answerResumes(script enginetest.Script) enginetest.Script {
	return func(r *enginetest.Request) enginetest.Reply {
		last := r.Messages[len(r.Messages)-1]
		if n := len(r.Messages); n > 1 && last.Role == ctxwin.RoleUser && last.Content == ctxwin.ShedNotice {
			last = r.Messages[n-2] // a shrink of the resumed session told the model of it
		}
		if last.Role == ctxwin.RoleUser && strings.HasPrefix(last.Content, "RESUME ") {
			return enginetest.Text("answered " + last.Content)
		}
		return script(r)
	}
}

// scriptedSession runs one long turn (reads, greps, bash, sheds and folds
// in a 16k window) and returns its log and the resumer of its state.
func scriptedSession(t *testing.T) (resumer, []byte) {
	t.Helper()
	root := t.TempDir()
	files := goFiles(t, root, 14, 1500, 7000)
	var mu sync.Mutex
	main := 0
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: answerResumes(cycleScript(files, &main, &mu))})
	t.Cleanup(srv.Close)
	r := resumer{t: t, srv: srv, root: root, state: t.TempDir()}
	if res := r.ask(cycleTask); res.Status != agent.AskDone {
		t.Fatalf("the scripted session: %+v", res)
	}
	data, err := os.ReadFile(onlyLog(t, r.state))
	if err != nil {
		t.Fatal(err)
	}
	return r, data
}

// withLog is a copy of r's state whose session log is data.
func (r resumer) withLog(t *testing.T, data []byte) resumer {
	t.Helper()
	src := onlyLog(t, r.state)
	rel, _ := filepath.Rel(r.state, src)
	c := r
	c.state = t.TempDir()
	dst := filepath.Join(c.state, rel)
	os.MkdirAll(filepath.Dir(dst), 0o700)
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSuffix(filepath.Base(dst), ".jsonl")
	if err := os.WriteFile(filepath.Join(filepath.Dir(dst), "last"), []byte(id+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTornWritesNeverLoseARound cuts the log of a scripted session at 50
// random byte offsets, 12 with -short (a crash mid-write, a full disk),
// some with garbage after the cut, and resumes each twice: every record
// whole before the cut is there after both resumes, byte for byte,
// followed by what each resume added, and the bytes cut are kept beside
// the log.
func TestTornWritesNeverLoseARound(t *testing.T) {
	r, orig := scriptedSession(t)
	ends := lineEnds(orig)
	rounds := 0
	for _, rec := range bytes.Split(orig, []byte("\n")) {
		if bytes.HasPrefix(rec, []byte(`{"t":"round"`)) {
			rounds++
		}
	}
	if rounds < 10 || !bytes.Contains(orig, []byte(`"fold"`)) {
		t.Fatalf("the scripted session is too plain to test with: %d rounds, fold %v", rounds, bytes.Contains(orig, []byte(`"fold"`)))
	}
	seed := testSeed(t)
	rng := rand.New(rand.NewSource(seed))
	t.Logf("seed %d; a log of %d bytes, %d records, %d rounds", seed, len(orig), len(ends), rounds)
	garbage := [][]byte{nil, []byte("garbage\n"), []byte(`{"t":"round","reply":{"con`), []byte("\x00\x00\x00\x00"), []byte("}\n{\n")}
	tries := 50
	if testing.Short() {
		tries = 12 // the race run's
	}
	for i := 0; i < tries; i++ {
		off := ends[0] + 1 + rng.Intn(len(orig)-ends[0]-1) // the start record stays whole
		junk := garbage[rng.Intn(len(garbage))]
		whole := 0 // bytes of the records whole before off
		for _, e := range ends {
			if e <= off {
				whole = e
			}
		}
		mangled := append(append([]byte{}, orig[:off]...), junk...)
		c := r.withLog(t, mangled)
		path := onlyLog(t, c.state)

		for n, prompt := range []string{"RESUME one", "RESUME two"} {
			if res := c.ask(prompt); res.Status != agent.AskDone {
				t.Fatalf("cut at %d (+%q), resume %d: %+v", off, junk, n+1, res)
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(after, orig[:whole]) {
				t.Fatalf("cut at %d (+%q), resume %d: the log lost records that were whole before the cut", off, junk, n+1)
			}
			recs := readRecords(t, path) // every line whole
			got := 0
			for _, rec := range recs {
				if rec.Kind == "turn" && strings.HasPrefix(rec.Prompt, "RESUME ") {
					got++
				}
			}
			if got != n+1 {
				t.Fatalf("cut at %d, resume %d: %d resumed turns in the log, want %d", off, n+1, got, n+1)
			}
		}
		cuts, _ := filepath.Glob(path + ".cut-*")
		cut := append(append([]byte{}, orig[whole:off]...), junk...)
		if bytes.HasPrefix(junk, []byte("}\n")) && json.Valid(append(append([]byte{}, orig[whole:off]...), '}')) {
			// The junk's brace closed the torn record into a valid one
			// (its later fields lost): it is kept, the rest cut.
			cut = junk[2:]
		}
		switch {
		case len(cut) == 0 && len(cuts) != 0:
			t.Errorf("cut at %d: a record boundary, yet %d cut files", off, len(cuts))
		case junk == nil && orig[off] == '\n' && len(cuts) == 0:
			// A last record that lost only its newline is whole: kept, not cut.
		case len(cut) > 0:
			if len(cuts) != 1 {
				t.Fatalf("cut at %d: %d cut files, want 1", off, len(cuts))
			}
			kept, _ := os.ReadFile(cuts[0])
			if !bytes.Equal(kept, cut) {
				t.Errorf("cut at %d: kept %q, want %q", off, kept, cut)
			}
		}
	}
}

// TestGarbageLineMidLog replaces a record in the middle of a log with
// garbage: the session resumes with every other record, says how many
// lines it skipped, keeps the garbage beside the log and blanks it there,
// so that the next resume meets it no more.
func TestGarbageLineMidLog(t *testing.T) {
	r, orig := scriptedSession(t)
	ends := lineEnds(orig)
	mid := len(ends) / 2
	start, end := ends[mid-1], ends[mid]
	garbage := []byte("not a record\n")
	mangled := append(append(append([]byte{}, orig[:start]...), garbage...), orig[end:]...)
	col := &collector{shrinkBefore: map[int]bool{}}
	c := r.withLog(t, mangled)
	c.ev = col
	a := c.start()
	if res := a.Ask(context.Background(), agent.AskParams{Prompt: "RESUME after the garbage"}); res.Status != agent.AskDone {
		t.Errorf("ask after the garbage: %+v", res)
	}
	a.Close()
	want := fmt.Sprintf("skipped 1 line(s) of its log that are not records (the first: line %d, byte %d: ", mid+1, start)
	found := false
	for _, n := range col.notices {
		if n.Level == agent.LevelWarning && strings.Contains(n.Text, want) && strings.Contains(n.Text, ".skipped-") {
			found = true
		}
		if strings.Contains(n.Text, ".cut-") {
			t.Errorf("a cut after garbage mid-log: %s", n.Text)
		}
	}
	if !found {
		t.Errorf("no warning saying %q and where the line is kept: %+v", want, col.notices)
	}
	path := onlyLog(t, c.state)
	after, _ := os.ReadFile(path)
	blanked := append(append(append([]byte{}, orig[:start]...), bytes.Repeat([]byte(" "), len(garbage)-1)...), '\n')
	blanked = append(blanked, orig[end:]...)
	if !bytes.HasPrefix(after, blanked) || !bytes.Contains(after[len(blanked):], []byte("RESUME after the garbage")) {
		t.Error("the log is not the records with the garbage blanked, followed by the new turn")
	}
	if cuts, _ := filepath.Glob(path + ".cut-*"); len(cuts) != 0 {
		t.Errorf("cut files %v", cuts)
	}
	kept, _ := filepath.Glob(path + ".skipped-*")
	if len(kept) != 1 {
		t.Fatalf("%d skipped files", len(kept))
	}
	if b, _ := os.ReadFile(kept[0]); !bytes.Equal(b, garbage) {
		t.Errorf("the skipped file holds %q", b)
	}
	// A second resume reads the blanked line as nothing.
	col2 := &collector{shrinkBefore: map[int]bool{}}
	c.ev = col2
	a = c.start()
	a.Close()
	for _, n := range col2.notices {
		if strings.Contains(n.Text, "skipped") {
			t.Errorf("the second resume: %s", n.Text)
		}
	}
}

// TestBadRecordMidLog breaks a record in the middle of a log with JSON
// that does not fit the history: the session resumes from the records
// before it, says where the log broke, and keeps the rest beside the log.
func TestBadRecordMidLog(t *testing.T) {
	r, orig := scriptedSession(t)
	ends := lineEnds(orig)
	mid := len(ends) / 2
	start, end := ends[mid-1], ends[mid] // record mid+1, 1-based
	for name, bad := range map[string][]byte{
		"unfitting": []byte(`{"t":"round","reply":{"role":"assistant","toolCalls":[{"id":"x","name":"read","arguments":"{}"}]}}` + "\n"),
	} {
		t.Run(name, func(t *testing.T) {
			mangled := append(append(append([]byte{}, orig[:start]...), bad...), orig[end:]...)
			col := &collector{shrinkBefore: map[int]bool{}}
			c := r.withLog(t, mangled)
			c.ev = col
			a := c.start()
			if !a.HasTurns() {
				t.Error("the resumed session has no turn")
			}
			if res := a.Ask(context.Background(), agent.AskParams{Prompt: "RESUME after the break"}); res.Status != agent.AskDone {
				t.Errorf("ask after the break: %+v", res)
			}
			a.Close()
			want := fmt.Sprintf("before record %d of its log, which could not be used (byte %d: ", mid+1, start)
			found := false
			for _, n := range col.notices {
				if n.Level == agent.LevelWarning && strings.Contains(n.Text, want) && strings.Contains(n.Text, ".cut-") {
					found = true
				}
			}
			if !found {
				t.Errorf("no warning saying %q and where the rest is kept: %+v", want, col.notices)
			}
			path := onlyLog(t, c.state)
			after, _ := os.ReadFile(path)
			if !bytes.HasPrefix(after, orig[:start]) || !bytes.Contains(after[start:], []byte("RESUME after the break")) {
				t.Error("the log is not the records before the break followed by the new turn")
			}
			cuts, _ := filepath.Glob(path + ".cut-*")
			if len(cuts) != 1 {
				t.Fatalf("%d cut files", len(cuts))
			}
			if kept, _ := os.ReadFile(cuts[0]); !bytes.Equal(kept, mangled[start:]) {
				t.Error("the cut file does not hold the rest of the log")
			}
		})
	}
}
