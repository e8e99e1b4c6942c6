package engine

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// sessionRequest is a request of about 10k tokens: a system prompt, the
// read tool, and eight rounds of tool calls with their results.
func sessionRequest() *llm.Request {
	req := userReq("Fix the bug in the handler.")
	result := strings.Repeat("func handler(w http.ResponseWriter, r *http.Request) { w.Write(nil) }\n", 50)
	for i := 0; i < 8; i++ {
		id := "call" + string(rune('a'+i))
		req.Messages = append(req.Messages,
			ctxwin.Message{Role: ctxwin.RoleAssistant, ToolCalls: []ctxwin.ToolCall{{ID: id, Name: "read", Arguments: `{"path":"x.go"}`}}},
			ctxwin.Message{Role: ctxwin.RoleTool, ToolCallID: id, Content: result})
	}
	return req
}

// BenchmarkComplete measures a streamed completion through the client and
// the fake engine, in process.
func BenchmarkComplete(b *testing.B) {
	srv := enginetest.New(enginetest.Options{Window: 64000, Script: enginetest.Sequence(enginetest.Reply{
		Reasoning: "Thinking about the next step.", Content: "Reading the next file.",
		ToolCalls: []ctxwin.ToolCall{{Name: "read", Arguments: `{"path":"y.go"}`}}})})
	defer srv.Close()
	c, err := New(Config{BaseURL: srv.URL(), CacheDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	req := sessionRequest()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Complete(context.Background(), req, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(srv.Requests()[0].PromptTokens), "prompt-tokens")
}

// TestConcurrentCompletes checks that concurrent calls keep their own
// captures (run with -race).
func TestConcurrentCompletes(t *testing.T) {
	h := newHarness(t, enginetest.Options{Script: enginetest.Echo()})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			text := strings.Repeat(string(rune('a'+i)), 10+i)
			resp, err := h.c.Complete(ctx(t), userReq(text), nil)
			if err == nil && (resp.Message.Content != text || resp.Usage == nil || resp.Timings == nil) {
				err = &APIError{Message: "wrong reply " + resp.Message.Content}
			}
			errs <- err
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}
