package enginetest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkChatCompletion measures the fake's in-process throughput on a
// prompt of about 8k tokens (tools, a long history of tool results), the
// size the agent's end-to-end tests and the prefill benchmark send.
func BenchmarkChatCompletion(b *testing.B) {
	for _, stream := range []bool{false, true} {
		name := "json"
		if stream {
			name = "stream"
		}
		b.Run(name, func(b *testing.B) {
			s := New(Options{Window: 64000, Script: Sequence(Reply{Reasoning: "Thinking about the next step.", Content: "Reading the next file.",
				ToolCalls: nil})})
			defer s.Close()
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			c := &http.Client{Transport: tr}
			msgs := []map[string]any{{"role": "system", "content": "You are a coding agent."}, {"role": "user", "content": "Fix the bug."}}
			result := strings.Repeat("func handler(w http.ResponseWriter, r *http.Request) { w.Write(nil) }\n", 50)
			for i := 0; i < 8; i++ {
				id := "call" + string(rune('a'+i))
				msgs = append(msgs,
					map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": id, "type": "function", "function": map[string]any{"name": "read", "arguments": `{"path":"x.go"}`}}}},
					map[string]any{"role": "tool", "tool_call_id": id, "content": result})
			}
			body, _ := json.Marshal(map[string]any{"model": DefaultModel, "messages": msgs, "stream": stream,
				"stream_options": map[string]any{"include_usage": true},
				"tools":          []any{map[string]any{"type": "function", "function": map[string]any{"name": "read", "parameters": map[string]any{"type": "object"}}}}})
			b.SetBytes(int64(len(body)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				resp, err := c.Post(s.URL()+"/chat/completions", "application/json", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatal(resp.Status)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(s.Requests()[0].PromptTokens), "prompt-tokens")
		})
	}
}

// BenchmarkTokenize measures the tokenizer on code.
func BenchmarkTokenize(b *testing.B) {
	text := strings.Repeat("func handler(w http.ResponseWriter, r *http.Request) { w.Write(nil) } // serve\n", 400)
	tk := newTokenizer(3.5)
	b.SetBytes(int64(len(text)))
	for i := 0; i < b.N; i++ {
		tk.Count(text)
	}
}
