package ctxwin

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The trace of random sessions: every request and every event, hashed, at
// several windows, with shrinks at the shed point (after the note round),
// on overflow and on demand. A change to any decision of a shrink changes
// a hash: the golden (testdata/trace.golden, -update to write it) is what
// proves a change of structure changed no behaviour.

// traceSession drives the sim's session as the agent does and hashes
// each request it renders and each event it makes.
func traceSession(t *testing.T, seed int64, window int) string {
	s := newSim(t, seed, window)
	sum := sha256.New()
	var events, folds int
	record := func(kind string, ev *Event) {
		if ev == nil {
			return
		}
		events++
		if ev.Fold != nil {
			folds++
		}
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(sum, "%s %s\n", kind, b)
	}
	for turn := 0; turn < 3; turn++ {
		s.startTurn()
		for r := 0; r < 45; r++ {
			traceRequest(s, sum, record)
			switch {
			case s.reqs%13 == 7:
				ev, fits := s.m.Refit()
				fmt.Fprintf(sum, "refit fits=%v\n", fits)
				record("refit", ev)
			case s.reqs%17 == 11:
				record("overflow", s.m.ShrinkToFit())
			case s.reqs%29 == 19:
				ok, why := s.m.CanCompact()
				fmt.Fprintf(sum, "can compact %v %q\n", ok, why)
				if ok {
					record("compact", s.m.Compact(fmt.Sprintf("NOTE on demand %d", s.reqs)))
				}
			}
			s.round()
		}
		traceRequest(s, sum, record)
		s.m.H.AddRound(Message{Content: "done"})
	}
	return fmt.Sprintf("events=%d folds=%d requests=%d sha256=%x", events, folds, s.reqs, sum.Sum(nil))
}

// traceRequest is sim.request without its checks: prepare, the note round
// when due, the shrink, the request hashed, sent and counted.
func traceRequest(s *sim, sum hash.Hash, record func(string, *Event)) {
	p := s.m.Prepare()
	record("applied", p.Applied)
	fmt.Fprintf(sum, "plan %d %v %v %v\n", p.Size, p.Shrink, p.Fold, p.Note)
	if p.Shrink {
		note := ""
		if p.Fold && p.Note {
			nr := s.m.NoteRound().Messages
			fmt.Fprintf(sum, "note request %d max %d\n", len(nr), s.m.NoteRound().MaxTokens)
			note = fmt.Sprintf("NOTE-%d: established facts", s.reqs)
			s.m.Sent()
		}
		record("shrink", s.m.Shrink(p, note))
	}
	msgs := s.m.H.Messages()
	chars := ToolChars(simTools)
	for _, m := range msgs {
		b, _ := json.Marshal(m)
		sum.Write(b)
		chars += m.Chars()
	}
	fmt.Fprintf(sum, "\nsize %d max %d chip %s\n", s.m.Gauge().Size(), s.m.Gauge().MaxTokens(), s.m.Gauge().Chip().Text)
	s.reqs++
	s.m.Sent()
	s.m.Observe(int(float64(chars)/s.cpt)+1, 100+s.rng.Intn(3000))
}

func TestTraceUnchanged(t *testing.T) {
	var got strings.Builder
	for seed := int64(1); seed <= 8; seed++ {
		w := []int{0, 8000, 12000, 16000, 24000, 32000}[seed%6]
		fmt.Fprintf(&got, "seed %d window %d: %s\n", seed, w, traceSession(t, seed, w))
	}
	goldenText(t, filepath.Join("testdata", "trace.golden"), got.String())
}

// traceScripted hashes a session at window whose rounds add(i) appends,
// with chunk reuse on (folds keep openings), through at most rounds
// requests: the shapes of runs.go's tests, whose replies reason at length.
func traceScripted(t *testing.T, window, rounds int, add func(m *Manager, i int)) string {
	m := session(window)
	m.Setup().ChunkReuse(8)
	m.StartTurn("TASK: explain the parser")
	sum := sha256.New()
	events := 0
	for i := 0; i < rounds; i++ {
		p := m.Prepare()
		fmt.Fprintf(sum, "plan %d %v %v %v\n", p.Size, p.Shrink, p.Fold, p.Note)
		if p.Shrink {
			note := fmt.Sprintf("note %d", i)
			if p.Note {
				m.NoteRound()
				m.Sent()
			}
			if ev := m.Shrink(p, note); ev != nil {
				events++
				b, _ := json.Marshal(ev)
				sum.Write(b)
			}
		}
		for _, msg := range send(m) {
			b, _ := json.Marshal(msg)
			sum.Write(b)
		}
		add(m, i)
	}
	return fmt.Sprintf("events=%d sha256=%x", events, sum.Sum(nil))
}

func TestTraceScriptedUnchanged(t *testing.T) {
	var got strings.Builder
	for _, window := range []int{8000, 12000, 16000, 20000} {
		for long := 1; long <= 4; long++ {
			large, tasks, think := 2+long, 400/long, 60+40*(long/3)
			trace := traceScripted(t, window, 150, func(m *Manager, i int) {
				id := fmt.Sprintf("c%d", i)
				reasoning := lines(3, "think")
				if i%long == 0 {
					reasoning = lines(think, "think long")
				}
				if i%tasks == tasks-1 {
					startSpecTask(m, i, id)
					return
				}
				m.H.AddRound(Message{Content: fmt.Sprintf("reading %d", i), Reasoning: reasoning, ToolCalls: []ToolCall{call(id)}})
				n := 4
				if i%large == 1 {
					n = 120
				}
				m.H.AddResult(readResult(id, fmt.Sprintf("src/f%d.go", i), n))
			})
			fmt.Fprintf(&got, "window %d long %d large %d think %d: %s\n", window, long, large, think, trace)
		}
	}
	goldenText(t, filepath.Join("testdata", "trace-scripted.golden"), got.String())
}

// goldenText compares got with the golden file at path, or writes it
// there under -update.
func goldenText(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s changed: a shrink decided otherwise\ngot:\n%swant:\n%s", path, got, want)
	}
}
