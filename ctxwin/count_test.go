package ctxwin

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// engineModel is a fake engine's accounting: a fixed part, each message's
// text at a density, and a template overhead per message.
type engineModel struct {
	fixed    int
	density  float64
	overhead int
}

func (e engineModel) text(s string) int { return int(math.Ceil(float64(len(s)) / e.density)) }

func (e engineModel) prompt(msgs []Message) int {
	n := e.fixed
	for _, m := range msgs {
		n += e.text(m.body()) + e.overhead
	}
	return n
}

// tokenize counts what Uncounted lists, as the engine's tokenizer would.
func (e engineModel) tokenize(m *Manager) {
	c := m.Uncounted()
	counts := make([]int, len(c.Texts))
	for i, t := range c.Texts {
		counts[i] = e.text(t)
	}
	c.Set(counts)
}

// TestEngineCounts drives a manager with an engine that counts denser and
// sparser than the estimate: with the tokenizer's counts and the engine's
// reports, the size of every request is the engine's count of it, within
// a token a message, from the third request on.
func TestEngineCounts(t *testing.T) {
	for _, density := range []float64{2.5, 4.5} {
		for _, tokenizer := range []bool{true, false} {
			t.Run(fmt.Sprintf("%.1f/tokenizer=%v", density, tokenizer), func(t *testing.T) {
				eng := engineModel{fixed: 900, density: density, overhead: 7}
				m := session(32000)
				m.StartTurn("survey the files")
				for i := 0; i < 10; i++ {
					if tokenizer {
						eng.tokenize(m)
					}
					p := m.Prepare()
					if p.Shrink {
						t.Fatalf("round %d: setup reached the shed point", i)
					}
					msgs := m.H.Messages()
					want := eng.prompt(msgs)
					got := m.Gauge().Size()
					// The second request teaches the template overhead.
					// Without a tokenizer only the newest round is
					// estimated, at the seed's pricing (never sparser
					// than 1.6 chars/token, no template overhead).
					if i > 1 && tokenizer && abs(got-want) > len(msgs) {
						t.Errorf("request %d: size %d, the engine counts %d", i, got, want)
					}
					if i > 0 && !tokenizer && got < want-2*eng.overhead {
						t.Errorf("request %d: the estimate %d is below the engine's count %d", i, got, want)
					}
					m.Sent()
					reply := Message{Content: fmt.Sprintf("Reading file %d.", i), ToolCalls: []ToolCall{call(fmt.Sprint(i))}}
					completion := eng.text(reply.body())
					m.Observe(want, completion)
					if got := m.Gauge().Size(); got != want {
						t.Errorf("request %d: after the engine's report the size is %d, want its count %d", i, got, want)
					}
					m.AddRound(reply, completion)
					m.H.AddResult(readResult(fmt.Sprint(i), fmt.Sprintf("src/f%d.go", i), 60+10*i))
				}
				if tokenizer && abs(int(math.Round(m.est.Overhead))-eng.overhead) > 1 {
					t.Errorf("learned a template overhead of %.1f tokens a message, the engine's is %d", m.est.Overhead, eng.overhead)
				}
				if tokenizer && math.Abs(m.est.Density-density) > 0.3 {
					t.Errorf("measured %.2f chars/token, the tokenizer's is %.1f", m.est.Density, density)
				}
			})
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// TestShrinkAtTheShedPoint: with engine counts, a shrink fires when the
// engine's count of the request crosses the shed point, not before.
func TestShrinkAtTheShedPoint(t *testing.T) {
	for _, density := range []float64{2.5, 4.5} {
		eng := engineModel{fixed: 900, density: density, overhead: 7}
		m := session(16000)
		b, _ := m.Gauge().Budget()
		m.StartTurn("survey the files")
		shrinks := 0
		for i := 0; i < 40; i++ {
			eng.tokenize(m)
			p := m.Prepare()
			real := eng.prompt(m.H.Messages())
			if p.Shrink {
				shrinks++
				if real < b.ShedPoint*92/100 {
					t.Errorf("%.1f: a shrink at %d tokens by the engine's count, %d%% of the shed point", density, real, real*100/b.ShedPoint)
				}
				m.Shrink(p, "")
			} else if real > b.ShedPoint+b.ShedPoint/50 {
				t.Errorf("%.1f: no shrink at %d tokens, past the shed point %d", density, real, b.ShedPoint)
			}
			msgs := m.H.Messages()
			m.Sent()
			m.Observe(eng.prompt(msgs), 20)
			m.AddRound(Message{ToolCalls: []ToolCall{call(fmt.Sprint(i))}}, 20)
			m.H.AddResult(readResult(fmt.Sprint(i), fmt.Sprintf("src/f%d.go", i), 80))
		}
		if shrinks == 0 {
			t.Errorf("%.1f: never shrank", density)
		}
	}
}

// TestOverflowSettlesTheRefusedRequest: a refusal's count is shared out
// over what it was not known for (the newest, big read), so Refit cuts that
// read to the room the window leaves, at its own density.
func TestOverflowSettlesTheRefusedRequest(t *testing.T) {
	eng := engineModel{fixed: 900, density: 3, overhead: 7}
	m := session(0)
	m.StartTurn("read the big file")
	msgs := m.H.Messages()
	m.Sent()
	m.Observe(eng.prompt(msgs), 20)
	m.AddRound(Message{ToolCalls: []ToolCall{call("big")}}, 20)
	big := readResult("big", "src/big.go", 2000)
	m.H.AddResult(big)
	m.Prepare()
	msgs = m.H.Messages()
	m.Sent()
	refused := eng.prompt(msgs)
	m.Setup().Window(16000)
	m.Observe(refused, 0)
	if got := m.Gauge().Size(); got != refused {
		t.Fatalf("after the refusal the size is %d, the engine counted %d", got, refused)
	}
	_, fits := m.Refit()
	b, _ := m.Gauge().Budget()
	if !fits || !big.Cut {
		t.Fatalf("Refit: fits %v, cut %v", fits, big.Cut)
	}
	real := eng.prompt(m.H.Messages())
	if real > b.Usable || real < b.Usable*9/10 {
		t.Errorf("the cut request has %d tokens by the engine's count; want just under the usable %d", real, b.Usable)
	}
	if got := m.Gauge().Size(); abs(got-real) > real/50 {
		t.Errorf("the cut request is priced at %d, the engine counts %d", got, real)
	}
	if mt := m.Gauge().MaxTokens(); mt+real > b.Window {
		t.Errorf("max_tokens %d does not fit the window with the prompt of %d", mt, real)
	}
	prefix, task := m.Gauge().Floor()
	if prefix <= 0 || task <= 0 || prefix+task > real {
		t.Errorf("floor: prefix %d, task %d of a request of %d", prefix, task, real)
	}
}

func TestUncounted(t *testing.T) {
	m := session(16000)
	m.StartTurn("task")
	c := m.Uncounted()
	if texts := c.Texts; len(texts) != 2 || texts[0] != "system prompt" || texts[1] != "task" {
		t.Fatalf("the first request's uncounted texts: %q", texts)
	}
	c.Set([]int{3})
	if got := m.Uncounted().Texts; len(got) != 2 {
		t.Errorf("counts of the wrong length were taken: %q uncounted", got)
	}
	c.Set([]int{3, 1})
	if got := m.Uncounted().Texts; len(got) != 0 {
		t.Errorf("still uncounted after Set: %q", got)
	}
	m.Sent()
	m.Observe(30, 5)
	m.AddRound(Message{Content: "reading", ToolCalls: []ToolCall{call("a")}}, 5)
	r := readResult("a", "src/a.go", 10)
	m.H.AddResult(r)
	// The reply is counted (its completion tokens); the result is not.
	if got := m.Uncounted().Texts; len(got) != 1 || got[0] != r.Text {
		t.Errorf("uncounted after a round: %q", got)
	}
}

func TestReplaced(t *testing.T) {
	sys := Message{Role: RoleSystem, Content: "s"}
	prompt := Message{Role: RoleUser, Content: "task"}
	reply := Message{Role: RoleAssistant, ToolCalls: []ToolCall{call("a")}}
	result := Message{Role: RoleTool, ToolCallID: "a", Content: "data"}
	shed := Message{Role: RoleUser, Content: contextMark(1) + shedOpening + ".\n" + ShedNotice}
	fold := Message{Role: RoleUser, Content: contextMark(2) + foldOpening + ".\n<recap>…</recap>"}
	notePrompt, note := Message{Role: RoleUser, Content: NotePrompt}, Message{Role: RoleAssistant, Content: "the note"}
	prev := []Message{sys, prompt}
	for _, next := range [][]Message{
		{sys, prompt, reply, result, shed},
		{sys, prompt, reply, result, notePrompt, note, fold},
		{sys, reply, result, fold},
	} {
		got := Replaced(prev, reply, next)
		if want := []Message{sys, prompt, reply, result}; !sameMessages(got, want) {
			t.Errorf("a round: %+v", got)
		}
	}
	answer := Message{Role: RoleAssistant, Content: "done"}
	prompt2 := Message{Role: RoleUser, Content: "next task"}
	got := Replaced([]Message{sys, prompt}, answer, []Message{sys, prompt2, fold})
	if want := []Message{sys, prompt, answer, prompt2}; !sameMessages(got, want) {
		t.Errorf("a turn's prompt: %+v", got)
	}
	if s, e := NewestItem(nil); s != 0 || e != 0 {
		t.Errorf("an empty request: %d, %d", s, e)
	}
}

// TestCutAtTheTextsDensity: a result the tokenizer counted is cut to the
// room at its own density, and its view is priced at it.
func TestCutAtTheTextsDensity(t *testing.T) {
	eng := engineModel{fixed: 900, density: 4.5, overhead: 0}
	m := session(8000)
	m.StartTurn("task")
	eng.tokenize(m)
	msgs := m.H.Messages()
	m.Sent()
	m.Observe(eng.prompt(msgs), 10)
	m.AddRound(Message{ToolCalls: []ToolCall{call("a")}}, 10)
	r := &Result{CallID: "a", Tool: "bash", Kind: KindBash, Text: strings.Repeat("plain words in a long listing\n", 2000)}
	m.H.AddResult(r)
	eng.tokenize(m)
	m.Prepare()
	b, _ := m.Gauge().Budget()
	real := eng.prompt(m.H.Messages())
	if !r.Cut || real > b.Usable || real < b.Usable*9/10 {
		t.Errorf("cut %v to a request of %d tokens by the engine's count, usable %d", r.Cut, real, b.Usable)
	}
}
