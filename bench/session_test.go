package main

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

func TestCounterMatchesTheEngine(t *testing.T) {
	srv := enginetest.New(enginetest.Options{})
	defer srv.Close()
	tools := []string{`{"type":"function","function":{"name":"read","description":"Read a file.","parameters":{"type":"object"}}}`,
		`{"type":"function","function":{"name":"bash","parameters":{}}}`}
	c := newCounter(srv, tools)
	rng := rand.New(rand.NewSource(1))
	pieces := []string{"func (b *Builder) Grow(n int) {", "\n\t", "// Grow grows b's capacity", " 12345 ", "ünïcödé", "<|im_end|>", "  ", "x", "{\"path\":\"a.go\"}"}
	text := func() string {
		var b strings.Builder
		for range rng.Intn(40) {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		return b.String()
	}
	for i := range 200 {
		msgs := []ctxwin.Message{{Role: ctxwin.RoleSystem, Content: text()}}
		for range rng.Intn(8) {
			switch rng.Intn(3) {
			case 0:
				msgs = append(msgs, ctxwin.Message{Role: ctxwin.RoleUser, Content: text()})
			case 1:
				msgs = append(msgs, ctxwin.Message{Role: ctxwin.RoleAssistant, Content: text(), Reasoning: text(),
					ToolCalls: []ctxwin.ToolCall{{ID: "x", Name: "read", Arguments: text()}}})
			default:
				msgs = append(msgs, ctxwin.Message{Role: ctxwin.RoleTool, ToolCallID: "x", Content: text()})
			}
		}
		withTools := rng.Intn(2) == 0
		var tj []string
		if withTools {
			tj = tools
		}
		if got, want := c.prompt(msgs, withTools), srv.PromptTokens(tj, msgs); got != want {
			t.Fatalf("case %d: counted %d tokens, the engine %d", i, got, want)
		}
	}
}

func TestToolJSON(t *testing.T) {
	got, err := toolJSON([]byte(`{"model":"m","tools":[ {"type": "function", "function": {"name": "read"}} ]}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{`{"type":"function","function":{"name":"read"}}`}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := toolJSON([]byte(`not json`)); err == nil {
		t.Error("no error for a body that is not JSON")
	}
}

func testSession() *Session {
	s := &Session{Seed: 7}
	for t := range 3 {
		turn := Turn{Prompt: fmt.Sprintf("task %d", t)}
		for st := range 4 {
			step := Step{Content: fmt.Sprintf("step %d.%d", t, st)}
			if st < 3 {
				step.Calls = []Call{{ID: callID(t, st, 0), Name: "read", Args: `{"path":"a.go"}`}}
				step.Outputs = []string{fmt.Sprintf("out %d.%d", t, st)}
				step.Did = []string{fmt.Sprintf("read a.go (%d.%d)", t, st)}
			}
			turn.Steps = append(turn.Steps, step)
		}
		s.Turns = append(s.Turns, turn)
	}
	return s
}

func TestPositionOf(t *testing.T) {
	s := testSession()
	if s.Rounds() != 12 || s.Round(2, 1) != 9 {
		t.Fatalf("Rounds %d, Round(2,1) %d", s.Rounds(), s.Round(2, 1))
	}
	result := func(t, st int) ctxwin.Message {
		return ctxwin.Message{Role: ctxwin.RoleTool, ToolCallID: callID(t, st, 0), Content: "whatever a policy made of it"}
	}
	for _, c := range []struct {
		name       string
		msgs       []ctxwin.Message
		turn, step int
		ok         bool
	}{
		{"a prompt", []ctxwin.Message{{Role: ctxwin.RoleSystem}, {Role: ctxwin.RoleUser, Content: "task 1"}}, 1, 0, true},
		{"a result", []ctxwin.Message{{Role: ctxwin.RoleUser, Content: "task 1"}, s.message(1, 0), result(1, 0)}, 1, 1, true},
		{"a notice after a result", []ctxwin.Message{s.message(2, 1), result(2, 1), {Role: ctxwin.RoleUser, Content: "[context] shed"}}, 2, 2, true},
		{"a recap quoting a prompt", []ctxwin.Message{{Role: ctxwin.RoleUser, Content: "<recap> task 0 </recap>"}, s.message(0, 2), result(0, 2)}, 0, 3, true},
		{"nothing of the session", []ctxwin.Message{{Role: ctxwin.RoleUser, Content: "What did we do so far?"}}, 0, 0, false},
		{"an unknown call", []ctxwin.Message{{Role: ctxwin.RoleTool, ToolCallID: "call_9_0_0"}}, 0, 0, false},
	} {
		turn, step, ok := s.positionOf(c.msgs)
		if turn != c.turn || step != c.step || ok != c.ok {
			t.Errorf("%s: got %d/%d %v, want %d/%d %v", c.name, turn, step, ok, c.turn, c.step, c.ok)
		}
	}
}

func TestNoteAndSummary(t *testing.T) {
	s := testSession()
	note := s.note(1, 2)
	for _, want := range []string{"task 2", "read a.go (1.0)", "read a.go (1.1)"} {
		if !strings.Contains(note, want) {
			t.Errorf("the note lacks %q:\n%s", want, note)
		}
	}
	if strings.Contains(note, "(1.2)") {
		t.Error("the note tells of a step not yet taken")
	}
	srv := enginetest.New(enginetest.Options{})
	defer srv.Close()
	sum := s.summary(2, 2, 60)
	for _, want := range []string{"task 0", "task 1", "task 2", "read a.go (2.1)"} {
		if !strings.Contains(sum, want) {
			t.Errorf("the summary lacks %q:\n%s", want, sum)
		}
	}
	if n := srv.Tokens(s.summary(2, 2, 40)); n > 80 {
		t.Errorf("a 40-token summary has %d tokens", n)
	}
}

// TestGenerate writes a short session twice from one seed: the same
// session, on real files, its outputs those of the real tools.
func TestGenerate(t *testing.T) {
	src, err := loadSource()
	if err != nil {
		t.Skipf("no Go distribution to read: %v", err)
	}
	a, err := Generate(src, t.TempDir(), 3, 40)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(src, t.TempDir(), 3, 40)
	if err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Fatal("one seed wrote two different sessions")
	}
	if a.Rounds() < 40 {
		t.Errorf("%d rounds, want at least 40", a.Rounds())
	}
	kinds := map[string]int{}
	for ti, turn := range a.Turns {
		if n := len(turn.Steps); n < minTurnSteps || n > maxTurnSteps {
			t.Errorf("turn %d has %d steps", ti, n)
		}
		last := turn.Steps[len(turn.Steps)-1]
		if len(last.Calls) != 0 || len(strings.Fields(last.Content)) < 100 {
			t.Errorf("turn %d does not end in an answer of realistic length", ti)
		}
		for si, st := range turn.Steps[:len(turn.Steps)-1] {
			if len(st.Calls) == 0 || len(st.Calls) != len(st.Outputs) {
				t.Fatalf("turn %d step %d: %d calls, %d outputs", ti, si, len(st.Calls), len(st.Outputs))
			}
			for j, c := range st.Calls {
				kinds[c.Name]++
				if c.ID != callID(ti, si, j) || !json.Valid([]byte(c.Args)) || st.Outputs[j] == "" {
					t.Errorf("turn %d step %d call %d: %+v", ti, si, j, c)
				}
				if c.Name == "read" && !strings.Contains(st.Outputs[j], "→") {
					t.Errorf("a read without numbered lines: %.100q", st.Outputs[j])
				}
			}
		}
	}
	if kinds["read"] == 0 || kinds["grep"]+kinds["bash"] == 0 {
		t.Errorf("the session lacks reads or searches: %v", kinds)
	}
}

func TestParseFlags(t *testing.T) {
	w, err := parseWindows("128k, 16k,32768")
	if err != nil || !reflect.DeepEqual(w, []int{16384, 32768, 131072}) {
		t.Errorf("parseWindows: %v %v", w, err)
	}
	for _, bad := range []string{"", "16q", "-1", "1k"} {
		if _, err := parseWindows(bad); err == nil {
			t.Errorf("parseWindows(%q): no error", bad)
		}
	}
	for in, want := range map[string]int{"64k": 65536, " 146K": 149504, "0": 0, "1000": 1000} {
		if n, err := parseTokens(in); err != nil || n != want {
			t.Errorf("parseTokens(%q) = %d, %v; want %d", in, n, err, want)
		}
	}
	for _, bad := range []string{"", "x", "-5", "4m"} {
		if _, err := parseTokens(bad); err == nil {
			t.Errorf("parseTokens(%q): no error", bad)
		}
	}
	s, err := parseSeeds("3")
	if err != nil || !reflect.DeepEqual(s, []int64{1, 2, 3}) {
		t.Errorf("parseSeeds(3): %v %v", s, err)
	}
	s, err = parseSeeds("5,9")
	if err != nil || !reflect.DeepEqual(s, []int64{5, 9}) {
		t.Errorf("parseSeeds(5,9): %v %v", s, err)
	}
	s, err = parseSeeds("1..3,7")
	if err != nil || !reflect.DeepEqual(s, []int64{1, 2, 3, 7}) {
		t.Errorf("parseSeeds(1..3,7): %v %v", s, err)
	}
	if _, err := parseSeeds("3..1"); err == nil {
		t.Error("parseSeeds(3..1): no error")
	}
	if _, err := parseSeeds("x"); err == nil {
		t.Error("parseSeeds(x): no error")
	}
	if _, err := pickPolicies("mask10,nope"); err == nil {
		t.Error("an unknown policy was accepted")
	}
	ps, err := pickPolicies("drophalf,reika")
	if err != nil || len(ps) != 1 || ps[0].Name != "drophalf" {
		t.Errorf("pickPolicies: %v %v", ps, err)
	}
}
