package ctxwin

import (
	"encoding/json"
	"fmt"
	"testing"
)

// benchHistory builds a session of rounds rounds at window tokens, each a
// read of readBytes, all sent and reported on by the engine (its usage, as
// every engine that reports usage sends).
func benchHistory(b *testing.B, window, rounds, readBytes int) *Manager {
	b.Helper()
	m := NewManager(NewHistory("system prompt", simTools), window)
	m.Setup().Outliner(func(r *Result, budget int) string { return "L1-20 func F()" })
	m.StartTurn("the task")
	text := lines(readBytes/50, "x")
	for i := 0; i < rounds; i++ {
		p := m.Prepare()
		if p.Shrink {
			m.Shrink(p, "note")
		}
		m.H.Messages()
		m.Sent()
		m.Observe(m.Gauge().Size(), 10)
		id := fmt.Sprintf("c%d", i)
		m.H.AddRound(Message{Content: "next", ToolCalls: []ToolCall{{ID: id, Name: "read", Arguments: `{"path":"a.go"}`}}})
		m.H.AddResult(&Result{CallID: id, Tool: "read", Kind: KindRead, Text: text, Path: "a.go", StartLine: 1, EndLine: 10, TotalLines: 10, Summary: "Read a.go lines 1-10 of 10"})
	}
	m.Prepare()
	m.H.Messages()
	m.Sent()
	return m
}

// BenchmarkAppend is the append path: one more round below the shed point,
// rendered, sent and reported on. Its cost should not grow with the
// history. (Without the engine's reports the messages stay unsettled, and
// pricing a request for its report grows with them: see count.go.)
func BenchmarkAppend(b *testing.B) {
	for _, rounds := range []int{300, 3000} {
		b.Run(fmt.Sprintf("rounds=%d", rounds), func(b *testing.B) {
			m := benchHistory(b, 10_000_000, rounds, 300)
			text := lines(6, "y")
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if bud, _ := m.Gauge().Budget(); m.Gauge().Size() > bud.ShedPoint*9/10 {
					// b.N rounds of appends fill any window: start again.
					b.StopTimer()
					m = benchHistory(b, 10_000_000, rounds, 300)
					b.StartTimer()
				}
				id := fmt.Sprintf("n%d", i)
				m.H.AddRound(Message{Content: "more", ToolCalls: []ToolCall{{ID: id, Name: "read", Arguments: `{"path":"b.go"}`}}})
				m.H.AddResult(&Result{CallID: id, Tool: "read", Kind: KindRead, Text: text, Path: "b.go"})
				p := m.Prepare()
				if p.Shrink {
					b.Fatal("the append benchmark reached the shed point")
				}
				m.H.Messages()
				m.Sent()
				m.Observe(m.Gauge().Size(), 10)
			}
		})
	}
}

// BenchmarkShrink is a shed+fold event on a 300-round session at a 128k
// window: plan, note request, shrink and render.
func BenchmarkShrink(b *testing.B) {
	base := benchHistory(b, 128000, 300, 3000)
	hist, err := json.Marshal(base.H)
	if err != nil {
		b.Fatal(err)
	}
	state := base.State()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		var h History
		if err := json.Unmarshal(hist, &h); err != nil {
			b.Fatal(err)
		}
		m := NewManager(&h, state.Window)
		m.Restore(state)
		m.Restored()
		m.Setup().Outliner(base.outline)
		// Push it over the shed point with one more large round.
		m.H.AddRound(Message{ToolCalls: []ToolCall{{ID: "big", Name: "read", Arguments: `{}`}}})
		m.H.AddResult(&Result{CallID: "big", Tool: "read", Kind: KindRead, Text: lines(4000, "big"), Path: "big.go", Summary: "Read big.go"})
		b.StartTimer()
		p := m.Prepare()
		if !p.Shrink {
			b.Fatal("no shrink due")
		}
		m.NoteRound()
		if ev := m.Shrink(p, "note"); ev == nil {
			b.Fatal("nothing shrank")
		}
		m.H.Messages()
		m.Sent()
	}
}
