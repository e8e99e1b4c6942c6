package engine

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// loadLog records what the loading hook was told.
type loadLog struct {
	mu   sync.Mutex
	seen []bool
}

func (l *loadLog) add(b bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, b)
}

func (l *loadLog) get() []bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]bool(nil), l.seen...)
}

// TestDiscoveryWaitsWhileTheModelLoads: llama-server answers every route
// with 503 "Loading model" while it loads; discovery waits, says so, and
// then finds the window — no REIKA_MODEL hint.
func TestDiscoveryWaitsWhileTheModelLoads(t *testing.T) {
	h := newHarness(t, enginetest.Options{Window: 8192, Loading: true})
	var l loadLog
	h.c.WatchLoading(func(loading bool) {
		l.add(loading)
		if loading {
			h.srv.SetLoading(false) // the model has loaded by the next look
		}
	})
	info := h.info()
	if info.Window != 8192 || info.WindowSource != llm.SourceEndpoint || info.Model != enginetest.DefaultModel {
		t.Errorf("info %+v", info)
	}
	if got := l.get(); len(got) != 2 || !got[0] || got[1] {
		t.Errorf("the hook was told %v, want loading then loaded", got)
	}
	if !equalDurations(h.sleeps, []time.Duration{500 * time.Millisecond}) {
		t.Errorf("waits %v", h.sleeps)
	}
	if log := h.logs.String(); !strings.Contains(log, "is loading its model") || !strings.Contains(log, "has loaded its model") {
		t.Errorf("log:\n%s", log)
	}
}

// TestCompletionWaitsWhileTheModelLoads: a server restarted mid-session
// loads again; the completion waits for it rather than failing after three
// tries.
func TestCompletionWaitsWhileTheModelLoads(t *testing.T) {
	h := newHarness(t, enginetest.Options{Script: enginetest.Sequence(enginetest.Text("back"))})
	h.info()
	h.srv.SetLoading(true)
	looks := 0
	h.c.WatchLoading(func(loading bool) {})
	h.c.sleep = func(_ context.Context, d time.Duration) error {
		h.sleeps = append(h.sleeps, d)
		if looks++; looks == 6 {
			h.srv.SetLoading(false)
		}
		return nil
	}
	resp, _, err := h.ask(userReq("go"))
	if err != nil || resp.Message.Content != "back" {
		t.Fatalf("resp %+v err %v", resp, err)
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	if !equalDurations(h.sleeps, want) {
		t.Errorf("waits %v, want %v", h.sleeps, want)
	}
}

func TestLoadWaitIsBounded(t *testing.T) {
	h := newHarness(t, enginetest.Options{Loading: true}, func(c *Config) { c.LoadWait = 3 * time.Second })
	_, err := h.c.Info(ctx(t))
	if err == nil || !strings.Contains(err.Error(), "still loading its model after 3s") || strings.Contains(err.Error(), "REIKA_MODEL") {
		t.Errorf("err = %v", err)
	}
}

// TestCutReplyRunsNoCalls: llama.cpp keeps the tool calls of a reply cut
// at max_tokens, the last one cut short; the round is a cut reply.
func TestCutReplyRunsNoCalls(t *testing.T) {
	long := enginetest.Reply{ToolCalls: []ctxwin.ToolCall{
		{Name: "read", Arguments: `{"path": "a.go"}`},
		{Name: "read", Arguments: `{"path": "` + strings.Repeat("very/long/", 40) + `b.go"}`},
	}}
	for _, stream := range []bool{true, false} {
		opts := enginetest.Options{Script: enginetest.Sequence(long), RejectStreamWithTools: !stream}
		h := newHarness(t, opts)
		req := userReq("go")
		req.MaxTokens = 60
		resp, _, err := h.ask(req)
		if err != nil {
			t.Fatal(err)
		}
		rec := h.srv.Requests()
		sent := rec[len(rec)-1].Reply
		if sent.Finish != "length" || len(sent.ToolCalls) != 2 {
			t.Fatalf("the fake sent %+v, want two calls cut at length", sent)
		}
		if resp.FinishReason != "length" || len(resp.Message.ToolCalls) != 0 {
			t.Errorf("stream %v: finish %q with %d calls, want a cut reply without calls", stream, resp.FinishReason, len(resp.Message.ToolCalls))
		}
		if !strings.Contains(h.logs.String(), "dropping them") {
			t.Errorf("log: %s", h.logs)
		}
	}
}

// TestRejectedOutputIsAskedOnce: the chat parser's 500 (streamed: an
// error line and no [DONE]) is asked once more, never without streaming,
// and the error names the engine's words.
func TestRejectedOutputIsAskedOnce(t *testing.T) {
	bad := enginetest.Reply{Content: "<tool_call>oops", Fault: enginetest.Fault{ParserError: true}}
	for _, stream := range []bool{true, false} {
		h := newHarness(t, enginetest.Options{Script: enginetest.Sequence(bad), RejectStreamWithTools: !stream})
		_, _, err := h.ask(userReq("go"))
		if err == nil || !strings.Contains(err.Error(), "does not match the expected peg-native format") || !strings.Contains(err.Error(), "twice") {
			t.Errorf("stream %v: err = %v", stream, err)
		}
		n := 0
		for _, r := range h.srv.Requests() {
			if r.Request.Stream == stream {
				n++
			}
		}
		if stream && n != 2 || len(h.srv.Requests()) != 2+boolInt(!stream) {
			t.Errorf("stream %v: %d requests (%d streamed), want the reply asked twice", stream, len(h.srv.Requests()), n)
		}
		if len(h.sleeps) != 0 || strings.Contains(h.logs.String(), "without streaming;") {
			t.Errorf("stream %v: waits %v, log:\n%s", stream, h.sleeps, h.logs)
		}
	}
	// A new sample that parses is taken.
	h := newHarness(t, enginetest.Options{Script: enginetest.Sequence(bad, enginetest.Text("fine"))})
	resp, _, err := h.ask(userReq("go"))
	if err != nil || resp.Message.Content != "fine" || !strings.Contains(h.logs.String(), "asking once more") {
		t.Errorf("resp %+v err %v log %s", resp, err, h.logs)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestUnreachableHintNamesThePort(t *testing.T) {
	c, err := New(Config{BaseURL: "http://127.0.0.1:1/v1", CacheDir: t.TempDir(), HTTPClient: testHTTP(t, nil)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Info(ctx(t))
	if err == nil || !strings.Contains(err.Error(), "--port 1)") {
		t.Errorf("err = %v", err)
	}
}

// TestAPIKeyHints: llama-server with --api-key answers 401 everywhere but
// /health; the errors name REIKA_API_KEY.
func TestAPIKeyHints(t *testing.T) {
	none := newHarness(t, enginetest.Options{APIKey: "sk-right-key"})
	if _, err := none.c.Info(ctx(t)); err == nil || !strings.Contains(err.Error(), "wants an API key: set REIKA_API_KEY") {
		t.Errorf("no key: %v", err)
	}
	wrong := newHarness(t, enginetest.Options{APIKey: "sk-right-key"}, func(c *Config) { c.APIKey = "sk-wrong-key" })
	if _, err := wrong.c.Info(ctx(t)); err == nil || !strings.Contains(err.Error(), "refused the API key: check REIKA_API_KEY") {
		t.Errorf("wrong key: %v", err)
	}
	right := newHarness(t, enginetest.Options{APIKey: "sk-right-key", Window: 4096, Script: enginetest.Sequence(enginetest.Text("in"))},
		func(c *Config) { c.APIKey = "sk-right-key" })
	if info := right.info(); info.Window != 4096 {
		t.Errorf("with the key: %+v", info)
	}
	if resp, _, err := right.ask(userReq("go")); err != nil || resp.Message.Content != "in" {
		t.Errorf("with the key: %+v %v", resp, err)
	}
	// A 401 on the chat itself (the key revoked since) says the same.
	revoked := newHarness(t, enginetest.Options{Script: enginetest.Sequence(enginetest.Reply{Fault: enginetest.Fault{Status: 401, Message: "Invalid API Key"}})},
		func(c *Config) { c.APIKey = "sk-old-key" })
	if _, _, err := revoked.ask(userReq("go")); err == nil || !strings.Contains(err.Error(), "Invalid API Key") || !strings.Contains(err.Error(), "REIKA_API_KEY") {
		t.Errorf("chat 401: %v", err)
	}
}
