package enginetest

// The fake engine's replies: stream shapes, limits, faults.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

func sse(t *testing.T, b []byte) (chunks []map[string]any, done bool) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "data: ") {
			continue
		}
		payload := strings.TrimPrefix(line, "data: ")
		if payload == "[DONE]" {
			done = true
			continue
		}
		chunks = append(chunks, decode(t, []byte(payload)))
	}
	return chunks, done
}

func TestStreamShapes(t *testing.T) {
	reply := Reply{Reasoning: "Let me think about the file first.", Content: "I will read it now, then answer.",
		ToolCalls: []ctxwin.ToolCall{{Name: "read", Arguments: `{"path":"go.mod","start_line":1}`}, {Name: "grep", Arguments: `{"pattern":"func main"}`}}}
	for _, tc := range []struct {
		shape        string
		reasoningKey string
		timings      bool
	}{
		{ShapeLlamaCpp, "reasoning_content", true},
		{ShapeVLLM, "reasoning", false},
		{ShapeHosted, "reasoning_content", false},
	} {
		for _, includeUsage := range []bool{true, false} {
			t.Run(tc.shape, func(t *testing.T) {
				s, c := start(t, Options{Shape: tc.shape, Script: Sequence(reply)})
				body := chatBody(user("go"))
				body["stream"] = true
				body["tools"] = []any{map[string]any{"type": "function", "function": map[string]any{"name": "read", "parameters": map[string]any{"type": "object"}}}}
				if includeUsage {
					body["stream_options"] = map[string]any{"include_usage": true}
				}
				st, b, h := post(t, c, s.URL()+"/chat/completions", body)
				if st != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
					t.Fatalf("status %d, %s", st, h.Get("Content-Type"))
				}
				chunks, done := sse(t, b)
				if !done {
					t.Error("no [DONE]")
				}
				var reasoning, content strings.Builder
				args := map[int]*strings.Builder{}
				names, ids := map[int]string{}, map[int]string{}
				finish := ""
				var usage, timings any
				for i, ch := range chunks {
					if ch["object"] != "chat.completion.chunk" {
						t.Errorf("chunk %d object %v", i, ch["object"])
					}
					if u := ch["usage"]; u != nil {
						usage = u
						if n := len(ch["choices"].([]any)); n != 0 {
							t.Errorf("usage chunk has %d choices", n)
						}
					}
					if tm := ch["timings"]; tm != nil {
						timings = tm
						if i != len(chunks)-1 {
							t.Errorf("timings on chunk %d of %d", i, len(chunks))
						}
					}
					d := path(ch, "choices", 0, "delta")
					if r, ok := path(d, tc.reasoningKey).(string); ok {
						reasoning.WriteString(r)
					}
					if s, ok := path(d, "content").(string); ok {
						content.WriteString(s)
					}
					for _, tcall := range asSlice(path(d, "tool_calls")) {
						idx := num(path(tcall, "index"))
						if args[idx] == nil {
							args[idx] = &strings.Builder{}
						}
						if n, ok := path(tcall, "function", "name").(string); ok {
							names[idx] = n
						}
						if id, ok := path(tcall, "id").(string); ok {
							ids[idx] = id
						}
						a, _ := path(tcall, "function", "arguments").(string)
						args[idx].WriteString(a)
					}
					if f, ok := path(ch, "choices", 0, "finish_reason").(string); ok {
						finish = f
					}
				}
				if reasoning.String() != reply.Reasoning || content.String() != reply.Content {
					t.Errorf("reasoning %q content %q", reasoning.String(), content.String())
				}
				for j, call := range reply.ToolCalls {
					if names[j] != call.Name || args[j] == nil || args[j].String() != call.Arguments || ids[j] == "" {
						t.Errorf("call %d: %q %v id %q", j, names[j], args[j], ids[j])
					}
				}
				if finish != "tool_calls" {
					t.Errorf("finish_reason %q", finish)
				}
				if (usage != nil) != includeUsage {
					t.Errorf("usage present %v with include_usage %v", usage != nil, includeUsage)
				}
				if (timings != nil) != tc.timings {
					t.Errorf("timings present %v", timings != nil)
				}
			})
		}
	}
}

func asSlice(v any) []any {
	a, _ := v.([]any)
	return a
}

func TestNonStreamReply(t *testing.T) {
	s, c := start(t, Options{Shape: ShapeVLLM, Script: Sequence(Reply{Reasoning: "hmm", ToolCalls: []ctxwin.ToolCall{{Name: "read", Arguments: `{"path":"a"}`}}})})
	body := chatBody(user("go"))
	body["tools"] = []any{map[string]any{"type": "function", "function": map[string]any{"name": "read"}}}
	st, b, _ := post(t, c, s.URL()+"/chat/completions", body)
	if st != 200 {
		t.Fatal(st)
	}
	r := decode(t, b)
	m := path(r, "choices", 0, "message")
	if path(m, "reasoning") != "hmm" || path(m, "tool_calls", 0, "function", "name") != "read" || path(r, "choices", 0, "finish_reason") != "tool_calls" {
		t.Errorf("message %v", r)
	}
	if r["timings"] != nil {
		t.Error("vLLM reports timings")
	}
}

func TestMaxTokensCutsReply(t *testing.T) {
	s, c := start(t, Options{Script: Sequence(Text(strings.Repeat("This answer goes on and on. ", 50)))})
	body := chatBody(user("go"))
	body["max_tokens"] = 10
	_, b, _ := post(t, c, s.URL()+"/chat/completions", body)
	r := decode(t, b)
	if path(r, "choices", 0, "finish_reason") != "length" || num(path(r, "usage", "completion_tokens")) > 10 {
		t.Errorf("cut reply: %v", r)
	}
	// The window fills during generation: llama.cpp stops with "length".
	s2, c2 := start(t, Options{Window: 60, Script: Sequence(Text(strings.Repeat("More words to say. ", 50)))})
	_, b, _ = post(t, c2, s2.URL()+"/chat/completions", chatBody(user("go")))
	r = decode(t, b)
	if path(r, "choices", 0, "finish_reason") != "length" || num(path(r, "usage", "total_tokens")) > 60 {
		t.Errorf("window-cut reply: %v", r["usage"])
	}
}

func TestToolPairsChecked(t *testing.T) {
	s, c := start(t, Options{Shape: ShapeHosted})
	orphan := chatBody(user("hi"), msg{"role": "tool", "tool_call_id": "x", "content": "result"})
	st, b, _ := post(t, c, s.URL()+"/chat/completions", orphan)
	if st != 400 || !strings.Contains(string(b), "must be a response to a preceeding message with 'tool_calls'") {
		t.Errorf("orphan tool result: %d %s", st, b)
	}
	unanswered := chatBody(user("hi"), msg{"role": "assistant", "tool_calls": []any{map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "read", "arguments": "{}"}}}}, user("next"))
	st, b, _ = post(t, c, s.URL()+"/chat/completions", unanswered)
	if st != 400 || !strings.Contains(string(b), "c1") {
		t.Errorf("unanswered call: %d %s", st, b)
	}
	lenient, c2 := start(t, Options{Shape: ShapeHosted, Lenient: true})
	if st, _, _ := post(t, c2, lenient.URL()+"/chat/completions", orphan); st != 200 {
		t.Errorf("lenient: %d", st)
	}
}

func TestBadRequests(t *testing.T) {
	s, c := start(t, Options{Shape: ShapeVLLM})
	for _, body := range []any{
		map[string]any{"model": DefaultModel},
		map[string]any{"model": DefaultModel, "messages": []any{map[string]any{"role": "wizard", "content": "x"}}},
		map[string]any{"model": DefaultModel, "messages": []any{user("x")}, "tool_choice": 5},
	} {
		if st, b, _ := post(t, c, s.URL()+"/chat/completions", body); st != 400 {
			t.Errorf("%v: %d %s", body, st, b)
		}
	}
	if st, b, _ := post(t, c, s.URL()+"/chat/completions", map[string]any{"model": "other", "messages": []any{user("x")}}); st != 404 || !strings.Contains(string(b), "does not exist") {
		t.Errorf("unknown model: %d %s", st, b)
	}
}

func TestAPIKey(t *testing.T) {
	s, c := start(t, Options{APIKey: "sk-secret"})
	for _, p := range []string{"/health", "/v1/health"} {
		if st, _ := get(t, c, s.RootURL()+p); st != 200 {
			t.Errorf("llama.cpp %s is public, got %d", p, st)
		}
	}
	for _, p := range []string{"/v1/models", "/models", "/props", "/slots"} {
		if st, m := get(t, c, s.RootURL()+p); st != 401 || path(m, "error", "type") != "authentication_error" {
			t.Errorf("llama.cpp %s without the key: %d %v", p, st, m)
		}
	}
	if st, _, _ := post(t, c, s.URL()+"/chat/completions", chatBody(user("x"))); st != 401 {
		t.Errorf("no key: %d", st)
	}
	req, _ := http.NewRequest("POST", s.URL()+"/chat/completions", strings.NewReader(`{"messages":[{"role":"user","content":"x"}]}`))
	req.Header.Set("Authorization", "Bearer sk-secret")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("with key: %d", resp.StatusCode)
	}
}

func TestRejectStreamWithTools(t *testing.T) {
	s, c := start(t, Options{RejectStreamWithTools: true})
	body := chatBody(user("x"))
	body["stream"] = true
	body["tools"] = []any{map[string]any{"type": "function", "function": map[string]any{"name": "read"}}}
	st, b, _ := post(t, c, s.URL()+"/chat/completions", body)
	if st != 500 || !strings.Contains(string(b), "Cannot use tools with stream") {
		t.Errorf("%d %s", st, b)
	}
	delete(body, "stream")
	if st, _, _ := post(t, c, s.URL()+"/chat/completions", body); st != 200 {
		t.Errorf("non-streaming with tools: %d", st)
	}
}

func TestFaults(t *testing.T) {
	streamBody := chatBody(user("go"))
	streamBody["stream"] = true
	long := Text(strings.Repeat("A longer reply to stream in pieces. ", 10))

	t.Run("status", func(t *testing.T) {
		s, c := start(t, Options{Shape: ShapeHosted, Script: Sequence(Reply{Fault: Fault{Status: 429, RetryAfter: "2"}}, Text("ok"))})
		st, b, h := post(t, c, s.URL()+"/chat/completions", chatBody(user("go")))
		if st != 429 || h.Get("Retry-After") != "2" || !strings.Contains(string(b), "rate_limit_exceeded") {
			t.Errorf("429: %d %q %s", st, h.Get("Retry-After"), b)
		}
		if st, _, _ := post(t, c, s.URL()+"/chat/completions", chatBody(user("go"))); st != 200 {
			t.Errorf("next request: %d", st)
		}
		if recs := s.Requests(); recs[0].Status != 429 || recs[1].Status != 200 || recs[1].CacheN != 0 {
			t.Errorf("records: %+v", recs)
		}
	})
	t.Run("body", func(t *testing.T) {
		s, c := start(t, Options{Script: Sequence(Reply{Fault: Fault{Status: 502, Body: "<html>Bad Gateway</html>"}})})
		if st, b, _ := post(t, c, s.URL()+"/chat/completions", chatBody(user("go"))); st != 502 || string(b) != "<html>Bad Gateway</html>" {
			t.Errorf("%d %s", st, b)
		}
	})
	t.Run("truncate", func(t *testing.T) {
		r := long
		r.Fault = Fault{Truncate: true, AfterChunks: 3}
		s, c := start(t, Options{Script: Sequence(r)})
		_, b, _ := post(t, c, s.URL()+"/chat/completions", streamBody)
		chunks, done := sse(t, b)
		if done || len(chunks) != 3 {
			t.Errorf("truncated stream: %d chunks, done %v", len(chunks), done)
		}
		for _, ch := range chunks {
			if f := path(ch, "choices", 0, "finish_reason"); f != nil {
				t.Errorf("finish_reason %v in a truncated stream", f)
			}
		}
	})
	t.Run("hold", func(t *testing.T) {
		r := long
		r.Fault = Fault{Hold: true, AfterChunks: 2}
		s, c := start(t, Options{Script: Sequence(r)})
		b, _ := json.Marshal(streamBody)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "POST", s.URL()+"/chat/completions", bytes.NewReader(b))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		rd := bufio.NewReader(resp.Body)
		for n := 0; n < 2; {
			line, err := rd.ReadString('\n')
			if err != nil {
				t.Fatalf("after %d chunks: %v", n, err)
			}
			if strings.HasPrefix(line, "data: ") {
				n++
			}
		}
		// Nothing more comes until the client goes away.
		got := make(chan string, 1)
		go func() {
			rest, _ := io.ReadAll(rd)
			got <- string(rest)
		}()
		select {
		case rest := <-got:
			t.Fatalf("the held stream went on: %q", rest)
		case <-time.After(50 * time.Millisecond):
		}
		cancel()
		if rest := <-got; strings.Contains(rest, "data: ") {
			t.Errorf("a held stream sent more: %q", rest)
		}
	})
	t.Run("stream error", func(t *testing.T) {
		r := long
		r.Fault = Fault{StreamError: true, AfterChunks: 2}
		s, c := start(t, Options{Script: Sequence(r)})
		_, b, _ := post(t, c, s.URL()+"/chat/completions", streamBody)
		if !strings.HasSuffix(string(b), "\"type\":\"server_error\"}}\n\n") || strings.Contains(string(b), "[DONE]") {
			t.Errorf("stream: %s", b)
		}
	})
	t.Run("reset", func(t *testing.T) {
		r := long
		r.Fault = Fault{Reset: true, AfterChunks: 2}
		s, c := start(t, Options{Script: Sequence(r, Text("fine"))})
		b, _ := json.Marshal(streamBody)
		resp, err := c.Post(s.URL()+"/chat/completions", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil {
			t.Error("reading a reset stream succeeded")
		}
		// Non-streamed: the connection drops before the body.
		r.Fault = Fault{Reset: true}
		s.SetScript(Sequence(r))
		b, _ = json.Marshal(chatBody(user("go")))
		if resp, err := c.Post(s.URL()+"/chat/completions", "application/json", bytes.NewReader(b)); err == nil {
			resp.Body.Close()
			t.Error("a reset request got a response")
		}
	})
	t.Run("slow first byte", func(t *testing.T) {
		s, c := start(t, Options{Script: Sequence(Reply{Content: "late", Fault: Fault{FirstByteDelay: time.Hour}})})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		b, _ := json.Marshal(chatBody(user("go")))
		req, _ := http.NewRequestWithContext(ctx, "POST", s.URL()+"/chat/completions", bytes.NewReader(b))
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
			t.Fatal("got a response before the first byte was due")
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestNoCallsWhenNotOffered(t *testing.T) {
	s, c := start(t, Options{Script: Sequence(Reply{Content: "note", ToolCalls: []ctxwin.ToolCall{{Name: "read", Arguments: "{}"}}})})
	tools := []any{map[string]any{"type": "function", "function": map[string]any{"name": "read"}}}
	for _, tc := range []struct {
		choice any
		tools  []any
		calls  bool
	}{{nil, tools, true}, {"none", tools, false}, {nil, nil, false}} {
		body := chatBody(user("go"))
		if tc.tools != nil {
			body["tools"] = tc.tools
		}
		if tc.choice != nil {
			body["tool_choice"] = tc.choice
		}
		_, b, _ := post(t, c, s.URL()+"/chat/completions", body)
		r := decode(t, b)
		got := path(r, "choices", 0, "message", "tool_calls") != nil
		if got != tc.calls || path(r, "choices", 0, "message", "content") != "note" {
			t.Errorf("tool_choice %v, tools %v: %v", tc.choice, tc.tools != nil, r["choices"])
		}
	}
}
