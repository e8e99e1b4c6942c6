package engine

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// body decodes a recorded request body.
func body(t *testing.T, rec enginetest.Recorded) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(rec.Body, &m); err != nil {
		t.Fatalf("request body %q: %v", rec.Body, err)
	}
	return m
}

var thinkAndCall = enginetest.Reply{
	Reasoning: "The user wants the module file; read it first.",
	Content:   "Reading go.mod and main.go.",
	ToolCalls: []ctxwin.ToolCall{
		{Name: "read", Arguments: `{"path":"go.mod"}`},
		{Name: "read", Arguments: `{"path":"main.go","start_line":1,"end_line":40}`},
	},
}

func TestStreamingCompletion(t *testing.T) {
	for _, shape := range []string{enginetest.ShapeLlamaCpp, enginetest.ShapeLlamaCpp2025, enginetest.ShapeVLLM, enginetest.ShapeHosted, enginetest.ShapeOllama, enginetest.ShapeLMStudio} {
		t.Run(shape, func(t *testing.T) {
			h := newHarness(t, enginetest.Options{Shape: shape, Script: enginetest.Sequence(thinkAndCall)})
			resp, deltas, err := h.ask(userReq("What does go.mod say?"))
			if err != nil {
				t.Fatal(err)
			}
			m := resp.Message
			if m.Role != ctxwin.RoleAssistant || m.Content != thinkAndCall.Content || m.Reasoning != thinkAndCall.Reasoning {
				t.Errorf("message: %+v", m)
			}
			if len(m.ToolCalls) != 2 {
				t.Fatalf("tool calls: %+v", m.ToolCalls)
			}
			for i, want := range thinkAndCall.ToolCalls {
				if got := m.ToolCalls[i]; got.Name != want.Name || got.Arguments != want.Arguments || got.ID == "" {
					t.Errorf("call %d: %+v, want %+v with an id", i, got, want)
				}
			}
			if resp.FinishReason != "tool_calls" {
				t.Errorf("finish %q", resp.FinishReason)
			}
			// Deltas: reasoning and content apart, in order, adding up.
			var content, reasoning strings.Builder
			for _, d := range deltas {
				content.WriteString(d.Content)
				reasoning.WriteString(d.Reasoning)
			}
			if len(deltas) < 3 || content.String() != m.Content || reasoning.String() != m.Reasoning {
				t.Errorf("%d deltas: content %q reasoning %q", len(deltas), content.String(), reasoning.String())
			}

			rec := h.srv.Requests()[0]
			b := body(t, rec)
			if b["stream"] != true || path(b, "stream_options", "include_usage") != true {
				t.Errorf("request: stream %v, stream_options %v", b["stream"], b["stream_options"])
			}
			_, hasCachePrompt := b["cache_prompt"]
			isLlama := shape == enginetest.ShapeLlamaCpp || shape == enginetest.ShapeLlamaCpp2025
			if hasCachePrompt != isLlama || isLlama && b["cache_prompt"] != true {
				t.Errorf("cache_prompt %v sent to %s", b["cache_prompt"], shape)
			}
			for _, absent := range []string{"max_tokens", "max_completion_tokens", "temperature"} {
				if _, ok := b[absent]; ok {
					t.Errorf("%s sent: %v", absent, b[absent])
				}
			}
			if resp.Usage == nil || resp.Usage.PromptTokens != rec.PromptTokens || resp.Usage.CompletionTokens != rec.CompletionTokens {
				t.Errorf("usage %+v, engine counted %d/%d", resp.Usage, rec.PromptTokens, rec.CompletionTokens)
			}
			if (resp.Timings != nil) != isLlama {
				t.Errorf("timings %+v from %s", resp.Timings, shape)
			}
			if resp.Elapsed <= 0 {
				t.Error("no elapsed time")
			}
		})
	}
}

// TestCachedTokens checks what each engine reports of its prefix cache on a
// request that appends to the previous one.
func TestCachedTokens(t *testing.T) {
	long := strings.Repeat("The agent keeps each request append-only so the prefix cache is reused. ", 120)
	for _, tc := range []struct {
		shape       string
		cachedKnown bool
		timings     bool
	}{
		{enginetest.ShapeLlamaCpp, true, true},     // usage.prompt_tokens_details + timings
		{enginetest.ShapeLlamaCpp2025, true, true}, // from timings.cache_n
		{enginetest.ShapeVLLM, true, false},        // block-granular cached_tokens
		{enginetest.ShapeHosted, true, false},
		{enginetest.ShapeOllama, false, false}, // not reported
	} {
		t.Run(tc.shape, func(t *testing.T) {
			h := newHarness(t, enginetest.Options{Shape: tc.shape, Window: 100000, Script: enginetest.Sequence(enginetest.Text("Noted."))})
			req := userReq(long)
			first, _, err := h.ask(req)
			if err != nil {
				t.Fatal(err)
			}
			req.Messages = append(req.Messages, first.Message, ctxwin.Message{Role: ctxwin.RoleUser, Content: "And then?"})
			resp, _, err := h.ask(req)
			if err != nil {
				t.Fatal(err)
			}
			rec := h.srv.Requests()[1]
			u := resp.Usage
			if u == nil || u.PromptTokens != rec.PromptTokens || u.CachedKnown != tc.cachedKnown {
				t.Fatalf("usage %+v, engine counted %d prompt tokens", u, rec.PromptTokens)
			}
			if tc.cachedKnown && (u.CachedTokens != rec.CacheN || u.CachedTokens < rec.PromptTokens*9/10) {
				t.Errorf("cached %d, engine reused %d of %d", u.CachedTokens, rec.CacheN, rec.PromptTokens)
			}
			if tc.timings {
				tm := resp.Timings
				if tm == nil || tm.CacheN != rec.CacheN || tm.PromptN != rec.PromptN || tm.PromptMS != rec.PromptMS || tm.CacheN+tm.PromptN != u.PromptTokens {
					t.Errorf("timings %+v, engine %d/%d/%v", tm, rec.CacheN, rec.PromptN, rec.PromptMS)
				}
			}
		})
	}
}

func TestNonStreamingFallbacks(t *testing.T) {
	long := enginetest.Reply{Content: strings.Repeat("A reply long enough to stream in several chunks. ", 6)}
	for _, tc := range []struct {
		name  string
		fault enginetest.Fault
	}{
		{"truncated stream", enginetest.Fault{Truncate: true, AfterChunks: 3}},
		{"reset mid-stream", enginetest.Fault{Reset: true, AfterChunks: 3}},
		{"error mid-stream", enginetest.Fault{StreamError: true, AfterChunks: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			broken := long
			broken.Fault = tc.fault
			h := newHarness(t, enginetest.Options{Script: enginetest.Sequence(broken, long)})
			resp, deltas, err := h.ask(userReq("go"))
			if err != nil {
				t.Fatal(err)
			}
			recs := h.srv.Requests()
			if len(recs) != 2 || !recs[0].Request.Stream || recs[1].Request.Stream {
				t.Fatalf("requests: %d, stream %v then %v", len(recs), recs[0].Request.Stream, len(recs) > 1 && recs[1].Request.Stream)
			}
			if _, ok := body(t, recs[1])["stream_options"]; ok {
				t.Error("stream_options sent without streaming")
			}
			if resp.Message.Content != long.Content || resp.FinishReason != "stop" || resp.Usage == nil || resp.Timings == nil {
				t.Errorf("re-issued reply: %+v", resp)
			}
			if len(deltas) == 0 {
				t.Error("no deltas before the stream broke")
			}
			if !strings.Contains(h.logs.String(), "without streaming") {
				t.Errorf("log: %s", h.logs)
			}
		})
	}
}

func TestEngineRefusingStreamWithTools(t *testing.T) {
	h := newHarness(t, enginetest.Options{RejectStreamWithTools: true, Script: enginetest.Sequence(thinkAndCall)})
	for i := 0; i < 2; i++ {
		resp, deltas, err := h.ask(userReq("go"))
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Message.ToolCalls) != 2 || len(deltas) != 1 || deltas[0].Content != thinkAndCall.Content {
			t.Errorf("reply %d: %+v, deltas %+v", i, resp.Message, deltas)
		}
	}
	recs := h.srv.Requests()
	var streams []bool
	for _, r := range recs {
		streams = append(streams, r.Request.Stream)
	}
	// Refused once, then never streamed again with tools.
	if len(recs) != 3 || !streams[0] || streams[1] || streams[2] {
		t.Errorf("stream flags %v", streams)
	}
	// Without tools it still streams.
	req := userReq("no tools")
	req.Tools = nil
	if _, _, err := h.ask(req); err != nil {
		t.Fatal(err)
	}
	if last := h.srv.Requests()[3]; !last.Request.Stream {
		t.Error("a request without tools was not streamed")
	}
}

func TestToolCallIDsGenerated(t *testing.T) {
	h := newHarness(t, enginetest.Options{OmitToolCallIDs: true, Script: enginetest.Sequence(thinkAndCall)})
	resp, _, err := h.ask(userReq("go"))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, c := range resp.Message.ToolCalls {
		if !strings.HasPrefix(c.ID, "call_") || ids[c.ID] {
			t.Errorf("id %q", c.ID)
		}
		ids[c.ID] = true
	}
	// The ids round-trip: the next request answers the calls by them.
	req := userReq("go")
	req.Messages = append(req.Messages, resp.Message)
	for _, c := range resp.Message.ToolCalls {
		req.Messages = append(req.Messages, ctxwin.Message{Role: ctxwin.RoleTool, ToolCallID: c.ID, Content: "contents"})
	}
	if _, _, err := h.ask(req); err != nil {
		t.Errorf("answering generated ids: %v", err)
	}
}

func TestRequestShape(t *testing.T) {
	h := newHarness(t, enginetest.Options{Shape: enginetest.ShapeHosted})
	req := &llm.Request{
		Messages: []ctxwin.Message{
			{Role: ctxwin.RoleUser, Content: "go"},
			{Role: ctxwin.RoleAssistant, Reasoning: "think", ToolCalls: []ctxwin.ToolCall{{ID: "c1", Name: "read", Arguments: ""}}},
			{Role: ctxwin.RoleTool, ToolCallID: "c1", Content: ""},
			{Role: ctxwin.RoleUser, Content: "What have you established?"},
		},
		Tools:      []ctxwin.ToolSpec{readTool, {Name: "noschema"}},
		ToolChoice: "none",
		MaxTokens:  500,
	}
	if _, _, err := h.ask(req); err != nil {
		t.Fatal(err)
	}
	b := body(t, h.srv.Requests()[0])
	if b["tool_choice"] != "none" || num(b["max_tokens"]) != 500 {
		t.Errorf("tool_choice %v max_tokens %v", b["tool_choice"], b["max_tokens"])
	}
	msgs := b["messages"].([]any)
	if c, ok := msgs[2].(map[string]any)["content"]; !ok || c != "" {
		t.Errorf("empty tool result sent as %v (present %v)", c, ok)
	}
	asst := msgs[1].(map[string]any)
	if asst["reasoning_content"] != "think" || path(asst, "tool_calls", 0, "function", "arguments") != "{}" {
		t.Errorf("assistant message %v", asst)
	}
	tools := b["tools"].([]any)
	if path(tools[1], "function", "parameters", "type") != "object" || path(tools[0], "function", "parameters", "required", 0) != "path" {
		t.Errorf("tools %v", tools)
	}
	// tool_choice is not sent without tools; reasoning models get
	// max_completion_tokens (go-openai refuses max_tokens for them).
	o := newHarness(t, enginetest.Options{Shape: enginetest.ShapeHosted, Model: "gpt-5-mini"})
	if _, _, err := o.ask(&llm.Request{Messages: []ctxwin.Message{{Role: "user", Content: "hi"}}, ToolChoice: "none", MaxTokens: 99}); err != nil {
		t.Fatal(err)
	}
	b = body(t, o.srv.Requests()[0])
	if _, ok := b["tool_choice"]; ok || num(b["max_completion_tokens"]) != 99 || b["max_tokens"] != nil {
		t.Errorf("request %v", b)
	}
}

// TestUsageMissingIsNil: an engine that reports no usage leaves Usage nil.
func TestUsageMissingIsNil(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			w.Write([]byte(`{"data":[{"id":"m"}]}`))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n" +
			"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":null}\n\ndata: [DONE]\n\n"))
	}))
	defer srv.Close()
	c, _ := New(Config{BaseURL: srv.URL + "/v1", CacheDir: t.TempDir(), HTTPClient: testHTTP(t, nil)})
	resp, err := c.Complete(ctx(t), userReq("x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage != nil || resp.Timings != nil || resp.Message.Content != "hi" {
		t.Errorf("resp %+v", resp)
	}
}

// path walks decoded JSON.
func path(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func num(v any) int {
	f, _ := v.(float64)
	return int(f)
}
