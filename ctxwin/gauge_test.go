package ctxwin

import (
	"strings"
	"testing"
)

// Table tests of what a Gauge reads and a Setup sets (gauge.go, setup.go).

func TestGaugeWithoutAWindow(t *testing.T) {
	m := history(0, rd{reads: []int{30}})
	g := m.Gauge()
	if _, ok := g.Budget(); ok {
		t.Error("a budget without a window")
	}
	if room, floor, measured, ok := g.AnswerRoom(); ok || room != 0 || floor != 0 || measured {
		t.Errorf("room to answer without a window: %d %d %v %v", room, floor, measured, ok)
	}
	if got := g.MaxTokens(); got != 0 {
		t.Errorf("max_tokens %d without a window, want 0 (the server's)", got)
	}
	m.Setup().Configure(Settings{MaxTokens: 700})
	if got := g.MaxTokens(); got != 700 {
		t.Errorf("max_tokens %d without a window, want REIKA_MAX_TOKENS 700", got)
	}
	if c := g.Chip(); c.Window != 0 || strings.Contains(c.Text, "%") {
		t.Errorf("chip %+v without a window", c)
	}
}

// TestGaugeReadsTheRequest: the budget follows the window and the
// reserve; the room to answer is the window less the request; max_tokens
// never leaves less than the answer floor, and before any report never
// less than the reserve.
func TestGaugeReadsTheRequest(t *testing.T) {
	tests := []struct {
		name    string
		window  int
		rounds  int
		learned bool
	}{
		{"small request, nothing learned", 16000, 1, false},
		{"small request, learned", 16000, 1, true},
		{"large request, learned", 8000, 10, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rs []rd
			for range tt.rounds {
				rs = append(rs, rd{reads: []int{30}})
			}
			m := history(tt.window, rs...)
			if tt.learned {
				send(m)
			}
			g := m.Gauge()
			b, ok := g.Budget()
			if !ok || b != NewBudget(tt.window, m.reserve.Tokens(tt.window)) || g.Window() != tt.window {
				t.Fatalf("budget %+v, window %d", b, g.Window())
			}
			size := g.Size()
			room, floor, measured, ok := g.AnswerRoom()
			if !ok || room != tt.window-size || floor != AnswerFloor(b.Window, b.Reserve) || measured != tt.learned {
				t.Errorf("room %d floor %d measured %v; the request is %d tokens", room, floor, measured, size)
			}
			mt := g.MaxTokens()
			if mt < floor {
				t.Errorf("max_tokens %d under the answer floor %d", mt, floor)
			}
			if !tt.learned && mt < b.Reserve-ReplyMargin {
				t.Errorf("max_tokens %d before any report, under the reserve %d", mt, b.Reserve)
			}
			if want := MaxTokens(tt.window, min(size, tt.window-ReplyMargin-floor), 0, 0); tt.learned && mt != want {
				t.Errorf("max_tokens %d, want %d", mt, want)
			}
			if c := g.Chip(); c.Window != tt.window {
				t.Errorf("chip %+v", c)
			}
		})
	}
}

func TestGaugeWindowFor(t *testing.T) {
	m := history(16000)
	tests := []struct{ tokens, want int }{
		{0, 1024},
		{100, 1024},
		{1000, 3072},
		{5000, 12288},
	}
	for _, tt := range tests {
		got := m.Gauge().WindowFor(tt.tokens)
		if got != tt.want {
			t.Errorf("WindowFor(%d) = %d, want %d", tt.tokens, got, tt.want)
		}
		if r := m.reserve.Tokens(got); 2*tt.tokens > got-r || got%1024 != 0 {
			t.Errorf("WindowFor(%d) = %d does not hold it twice beside the reserve %d", tt.tokens, got, r)
		}
		if smaller := got - 1024; smaller >= 1024 && 2*tt.tokens <= smaller-m.reserve.Tokens(smaller) {
			t.Errorf("WindowFor(%d) = %d, but %d holds it", tt.tokens, got, smaller)
		}
	}
}

// TestGaugeFloor: what no shrink can remove is the fixed prefix and the
// task: the current turn's prompt and the results that define it.
func TestGaugeFloor(t *testing.T) {
	m := history(16000, rd{reads: []int{30}}, rd{task: true, reads: []int{30}}, rd{turn: true, reads: []int{30}}, rd{task: true, reads: []int{20}})
	prefix, task := m.Gauge().Floor()
	e := &m.est
	wantPrefix := m.fixedTokens() + e.MessageTokens(Message{Role: RoleSystem, Content: m.H.System})
	wantTask := e.MessageTokens(Message{Role: RoleUser, Content: "TASK 3: explain the lexer"}) + e.MessageTokens(m.H.Items[5].Results[0].message())
	if prefix != wantPrefix || task != wantTask {
		t.Errorf("floor %d + %d, want %d + %d (round 2's task is of an earlier turn)", prefix, task, wantPrefix, wantTask)
	}
}

func TestGaugeDescribe(t *testing.T) {
	m := history(16000, rd{think: 3, reads: []int{30, 30}}, rd{reads: []int{3}})
	h := m.H
	h.Items[2].Notice = "an old notice"
	h.Items[1].After = &Aside{Message: "A [context] To fit", Note: "the note"}
	h.invalidate()
	msgs := h.Messages()
	want := []string{
		"the system message",
		"the prompt of turn 1",
		"the reply of round 1",
		"the result of Read src/r1_0.go lines 1-30 of 30 in round 1",
		"the result of Read src/r1_1.go lines 1-30 of 30 in round 1",
		"the note prompt after round 1",
		"the note after round 1",
		"the message of the shrink after round 1",
		"the reply of round 2",
		"the result of Read src/r2_0.go lines 1-3 of 3 in round 2",
		"the notice after round 2",
	}
	if len(msgs) != len(want) {
		t.Fatalf("%d messages, want %d", len(msgs), len(want))
	}
	for i, w := range want {
		if got := m.Gauge().Describe(i); got != w {
			t.Errorf("message %d: %q, want %q", i, got, w)
		}
	}
}

// TestGaugeStalled: the thrash guard stalls at ThrashLimit shrinks without
// progress, and says why.
func TestGaugeStalled(t *testing.T) {
	m := history(16000)
	for n := 0; n <= ThrashLimit; n++ {
		m.progress = Progress{Stalled: n, Floor: 9000}
		stalled, why := m.Gauge().Stalled()
		if stalled != (n >= ThrashLimit) {
			t.Errorf("%d shrinks without progress: stalled %v", n, stalled)
		}
		if !strings.Contains(why, "the fixed prefix and the task take 9000 tokens") {
			t.Errorf("why: %q", why)
		}
	}
	m.progress = Progress{Stalled: ThrashLimit, Again: []Fetch{{Tool: "read", Path: "a.go", Label: "a.go lines 1-400"}, {Tool: "grep", Label: `grep "x"`}}}
	if _, why := m.Gauge().Stalled(); !strings.Contains(why, `(a.go lines 1-400; grep "x")`) || !strings.Contains(why, "Ask it to read a.go in ranges") {
		t.Errorf("why: %q", why)
	}
}

// TestSetup: what a Setup sets is what the manager then works with; a new
// prefix or new tools forget what the engine counted of the old ones.
func TestSetup(t *testing.T) {
	m := history(16000, rd{reads: []int{30}})
	s := m.Setup()
	s.Window(-5)
	if m.Gauge().Window() != 0 {
		t.Errorf("a negative window is %d, want unknown", m.Gauge().Window())
	}
	s.Window(24000)
	st := Settings{OutputLimit: 4096, MaxTokens: 2000, ReasoningRounds: 3, MinGenTokens: 6144}
	s.Configure(st)
	if got := s.Settings(); got != st {
		t.Errorf("settings %+v, want %+v", got, st)
	}
	if b, _ := m.Gauge().Budget(); b.Reserve != 6144 {
		t.Errorf("the reserve is %d, want the pinned 6144", b.Reserve)
	}
	s.ChunkReuse(-1)
	if m.chunkReuse != 0 {
		t.Errorf("chunk reuse %d", m.chunkReuse)
	}
	called := false
	s.Outliner(func(*Result, int) string { called = true; return "" })
	m.outline(nil, 0)
	if !called {
		t.Error("the outliner set is not the one used")
	}
	m.est.Fixed = 123
	before := len(m.H.Messages())
	s.Prefix("a new system prompt", simTools[:1])
	msgs := m.H.Messages()
	if msgs[0].Content != "a new system prompt" || len(m.H.Tools) != 1 || m.est.Fixed != 0 || len(msgs) != before {
		t.Errorf("after Prefix: system %q, %d tools, fixed %d", msgs[0].Content, len(m.H.Tools), m.est.Fixed)
	}
	m.est.Fixed = 123
	s.Tools(simTools)
	if len(m.H.Tools) != len(simTools) || m.est.Fixed != 0 || m.H.sentTools {
		t.Errorf("after Tools: %d tools, fixed %d", len(m.H.Tools), m.est.Fixed)
	}
}

// TestPrices: what Prices prices is what the estimator does.
func TestPrices(t *testing.T) {
	m := history(16000, rd{reads: []int{30}})
	send(m)
	p, e := m.Prices(), &m.est
	msg := Message{Role: RoleUser, Content: lines(10, "x")}
	if p.Tokens(1000, true) != e.Tokens(1000, true) || p.Tokens(1000, false) != e.Tokens(1000, false) ||
		p.MessageTokens(msg) != e.MessageTokens(msg) || p.ToolTokens(simTools, false) != e.ToolTokens(simTools, false) ||
		p.LearnedRatio() != e.LearnedRatio() {
		t.Error("Prices prices otherwise than the estimator")
	}
	if p.Tokens(1000, false) < p.Tokens(1000, true) {
		t.Error("new bytes priced below carried ones")
	}
}
