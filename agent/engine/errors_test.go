package engine

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

var longTask = strings.Repeat("Please refactor the parser so every branch reports its errors. ", 60)

func TestOverflowFromEachEngine(t *testing.T) {
	for _, tc := range []struct {
		name        string
		opts        enginetest.Options
		maxTokens   int
		statesCount bool // the error states the prompt tokens
	}{
		{"llama.cpp", enginetest.Options{Window: 300}, 0, true},
		{"llama.cpp stream error line", enginetest.Options{Window: 300, StreamErrorLine: true}, 0, true},
		{"llama.cpp late 2025", enginetest.Options{Shape: enginetest.ShapeLlamaCpp2025, Window: 300}, 0, true},
		{"vLLM nested", enginetest.Options{Shape: enginetest.ShapeVLLM, Window: 1200}, 800, true},
		{"vLLM flat", enginetest.Options{Shape: enginetest.ShapeVLLM, Window: 1200, FlatErrors: true}, 800, true},
		{"vLLM prompt only", enginetest.Options{Shape: enginetest.ShapeVLLM, Window: 300}, 0, true},
		{"hosted", enginetest.Options{Shape: enginetest.ShapeHosted, Window: 300}, 0, true},
		{"LM Studio", enginetest.Options{Shape: enginetest.ShapeLMStudio, Window: 300}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.opts, withWindow(100000))
			req := userReq(longTask)
			req.MaxTokens = tc.maxTokens
			_, _, err := h.ask(req)
			var o *llm.OverflowError
			if !errors.As(err, &o) || !llm.IsOverflow(err) {
				t.Fatalf("err = %v, want an OverflowError", err)
			}
			recs := h.srv.Requests()
			if len(recs) != 1 {
				t.Errorf("%d requests: an overflow must not be retried or re-issued", len(recs))
			}
			if o.Window != tc.opts.Window {
				t.Errorf("window %d, want %d (%s)", o.Window, tc.opts.Window, o.Message)
			}
			if tc.statesCount && o.PromptTokens != recs[0].PromptTokens {
				t.Errorf("prompt tokens %d, engine counted %d (%s)", o.PromptTokens, recs[0].PromptTokens, o.Message)
			}
			if o.Message == "" {
				t.Error("no message")
			}
			// The stated window is adopted (source "overflow").
			info := h.info()
			if info.Window != tc.opts.Window || info.WindowSource != llm.SourceOverflow {
				t.Errorf("after the overflow: %+v", info)
			}
		})
	}
}

func TestOverflowAdoptedOnlyWhenSmaller(t *testing.T) {
	h := newHarness(t, enginetest.Options{Shape: enginetest.ShapeVLLM, Window: 2000})
	req := userReq(longTask)
	req.MaxTokens = 1900
	if _, _, err := h.ask(req); !llm.IsOverflow(err) {
		t.Fatalf("err = %v", err)
	}
	if info := h.info(); info.Window != 2000 || info.WindowSource != llm.SourceEndpoint {
		t.Errorf("a stated window equal to the known one changed the source: %+v", info)
	}
}

func TestRetries(t *testing.T) {
	ok := enginetest.Text("fine")
	for _, tc := range []struct {
		name     string
		faults   []enginetest.Fault
		requests int
		sleeps   []time.Duration
		wantErr  string
	}{
		{"503 then ok", []enginetest.Fault{{Status: 503}}, 2, []time.Duration{500 * time.Millisecond}, ""},
		// The 502 is an engine that is down: waited for from the first
		// pause again (down.go).
		{"a 500, a 502, then ok", []enginetest.Fault{{Status: 500}, {Status: 502, Body: "<html><body>Bad Gateway</body></html>"}}, 3, []time.Duration{500 * time.Millisecond, 500 * time.Millisecond}, ""},
		{"503s are waited for", []enginetest.Fault{{Status: 503}, {Status: 503}, {Status: 504}, {Status: 503}}, 5, []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second}, ""},
		{"429 honours Retry-After", []enginetest.Fault{{Status: 429, RetryAfter: "7"}}, 2, []time.Duration{7 * time.Second}, ""},
		{"attempts are bounded", []enginetest.Fault{{Status: 500}, {Status: 500}, {Status: 500}, {Status: 500}}, 3, []time.Duration{500 * time.Millisecond, time.Second}, "HTTP 500"},
		{"Retry-After beyond the cap", []enginetest.Fault{{Status: 429, RetryAfter: "3600"}}, 1, nil, "not retrying"},
		{"400 is not retried", []enginetest.Fault{{Status: 400, Message: "bad request"}}, 1, nil, "bad request"},
		{"401 is not retried", []enginetest.Fault{{Status: 401, Message: "no key"}}, 1, nil, "HTTP 401"},
		{"501 is not retried", []enginetest.Fault{{Status: 501, Message: "not supported"}}, 1, nil, "HTTP 501"},
		{"reset before the response", []enginetest.Fault{{Reset: true, AfterChunks: -1}}, 2, []time.Duration{500 * time.Millisecond}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var replies []enginetest.Reply
			for _, f := range tc.faults {
				replies = append(replies, enginetest.Reply{Content: "x", Fault: f})
			}
			replies = append(replies, ok)
			h := newHarness(t, enginetest.Options{Shape: enginetest.ShapeHosted, Script: enginetest.Sequence(replies...)})
			req := userReq("go")
			req.Tools = nil
			resp, _, err := h.ask(req)
			if tc.wantErr == "" && (err != nil || resp.Message.Content != "fine") {
				t.Fatalf("resp %+v err %v", resp, err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if n := len(h.srv.Requests()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
			if !equalDurations(h.sleeps, tc.sleeps) {
				t.Errorf("waits %v, want %v", h.sleeps, tc.sleeps)
			}
		})
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAPIErrorShape(t *testing.T) {
	h := newHarness(t, enginetest.Options{Script: enginetest.Sequence(enginetest.Reply{Fault: enginetest.Fault{Status: 404, Message: "File Not Found"}})})
	_, _, err := h.ask(userReq("go"))
	var a *APIError
	if !errors.As(err, &a) || a.Status != 404 || a.Type != "not_found_error" || a.Message != "File Not Found" || llm.IsOverflow(err) {
		t.Errorf("err = %#v", err)
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":                              0,
		"3":                             3 * time.Second,
		"0.5":                           500 * time.Millisecond,
		"-1":                            0,
		"soon":                          0,
		"Thu, 01 Jan 2026 12:00:10 GMT": 10 * time.Second,
		"Thu, 01 Jan 2026 11:00:00 GMT": 0,
	} {
		if got := retryAfter(v, now); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestAPIKeyNeverLeaks runs against an engine that echoes the key in its
// errors and checks every error and log line.
func TestAPIKeyNeverLeaks(t *testing.T) {
	const key = "sk-test-0123456789abcdef"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("Authorization")
		switch {
		case r.URL.Path == "/v1/models":
			w.Write([]byte(`{"object":"list","data":[{"id":"m","owned_by":"system"}]}`))
		default:
			w.WriteHeader(500)
			w.Write([]byte(`{"error":{"message":"upstream rejected ` + got + `","type":"server_error","code":"` + key + `"}}`))
		}
	}))
	defer srv.Close()
	l := &logs{}
	c, err := New(Config{BaseURL: srv.URL + "/v1", APIKey: key, CacheDir: t.TempDir(), Logf: l.logf, HTTPClient: testHTTP(t, nil),
		Retry: Retry{Attempts: 2, Base: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(ctx(t), userReq("go"), nil)
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "[REDACTED]") {
		t.Errorf("error: %v", err)
	}
	var a *APIError
	if !errors.As(err, &a) || strings.Contains(a.Message+a.Code, key) {
		t.Errorf("APIError fields hold the key: %#v", a)
	}
	if strings.Contains(l.String(), key) || !strings.Contains(l.String(), "retrying") {
		t.Errorf("log: %s", l)
	}
	// The key was sent, of course.
	if info, err := c.Info(ctx(t)); err != nil || info.Model != "m" {
		t.Errorf("Info: %+v %v", info, err)
	}

	// Overflow and unreachable errors are cleaned too.
	red := redactor{key: key}
	o := red.error(&llm.OverflowError{Message: "prompt from " + key + " too long"})
	u := red.error(&llm.UnreachableError{URL: "http://" + key + "@h/v1", Err: errors.New("dial " + key)})
	for _, e := range []error{o, u} {
		if strings.Contains(e.Error(), key) {
			t.Errorf("leak: %v", e)
		}
	}
	if !llm.IsOverflow(o) {
		t.Error("redaction lost the overflow type")
	}
}

func TestContextCancelled(t *testing.T) {
	h := newHarness(t, enginetest.Options{Script: enginetest.Sequence(enginetest.Reply{Content: "slow", Fault: enginetest.Fault{FirstByteDelay: time.Hour}})})
	h.info()
	c, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := h.c.Complete(c, userReq("go"), nil)
		done <- err
	}()
	for deadline := time.Now().Add(time.Minute); len(h.srv.Requests()) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) { // hang guard
			t.Fatal("the request never reached the engine")
		}
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute): // hang guard
		t.Fatal("Complete did not return after cancel")
	}
	if n := len(h.srv.Requests()); n != 1 {
		t.Errorf("%d requests after a cancel", n)
	}
}

// TestParseErrorBody checks the overflow predicate and its numbers on the
// literal bodies engines send.
func TestParseErrorBody(t *testing.T) {
	for _, tc := range []struct {
		status         int
		body           string
		overflow       bool
		prompt, window int
	}{
		{400, `{"error":{"code":400,"message":"request (17993 tokens) exceeds the available context size (16384 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":17993,"n_ctx":16384}}`, true, 17993, 16384},
		{400, `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}`, true, 9000, 8192},
		{0, `{"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}`, true, 5000, 4096},
		{400, `{"error":{"message":"This model's maximum context length is 131072 tokens. However, you requested 1024 output tokens and your prompt contains at least 130049 input tokens, for a total of at least 131073 tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=130049)","type":"BadRequestError","param":"input_tokens","code":400}}`, true, 130049, 131072},
		{400, `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 8192 tokens (4096 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`, true, 4096, 4096},
		{400, `{"error":{"message":"'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778). None","type":"BadRequestError","param":null,"code":400}}`, true, 2778, 4096},
		{400, `{"error":{"message":"You passed 9000 input tokens and requested 100 output tokens. However, the model's context length is only 8192 tokens, resulting in a maximum input length of 8092 tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value=9000)","type":"BadRequestError","param":"input_tokens","code":400}}`, true, 9000, 8192},
		{400, `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, true, 130000, 128000},
		{400, `{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","code":"context_length_exceeded"}}`, true, 0, 0},
		{400, `{"error":{"type":"invalid_request_error","message":"prompt is too long: 213462 tokens > 200000 maximum"}}`, true, 213462, 200000},
		{400, `{"error":"Trying to keep the first 10136 tokens when context the overflows. However, the model is loaded with context length of only 7866 tokens, which is not enough."}`, true, 10136, 7866},
		{413, `{"error":{"type":"request_too_large","message":"Request exceeds the maximum context size"}}`, true, 0, 0},
		// Not overflows.
		{400, `{"error":{"message":"Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.","type":"invalid_request_error","param":"messages","code":null}}`, false, 0, 0},
		{500, `{"error":{"code":500,"message":"context length computation failed","type":"server_error"}}`, false, 0, 0},
		{404, `{"error":"model 'x' not found"}`, false, 0, 0},
		{502, `<html><body><h1>502 Bad Gateway</h1></body></html>`, false, 0, 0},
		{422, `{"detail":[{"loc":["body","messages"],"msg":"field required","type":"value_error.missing"}]}`, false, 0, 0},
	} {
		info := parseErrorBody([]byte(tc.body))
		prompt, window, ok := info.overflow(tc.status)
		if ok != tc.overflow || prompt != tc.prompt || window != tc.window {
			t.Errorf("%d %s\n  = overflow %v, prompt %d, window %d; want %v %d %d", tc.status, tc.body, ok, prompt, window, tc.overflow, tc.prompt, tc.window)
		}
		if info.Message == "" {
			t.Errorf("no message from %s", tc.body)
		}
	}
}

func TestStreamedOverflowWithNoFinish(t *testing.T) {
	// An engine that sends a chunk and then a data: {"error":...} overflow
	// (llama.cpp after PR #16486, for an error after streaming started).
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			w.Write([]byte(`{"data":[{"id":"m","owned_by":"llamacpp","meta":{"n_ctx":4096}}]}`))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(": ping\n\n: ping\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null}}]}\n\n" +
			`data: {"error":{"code":400,"message":"request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}` + "\n\n"))
	}))
	defer srv.Close()
	c, _ := New(Config{BaseURL: srv.URL + "/v1", CacheDir: t.TempDir(), HTTPClient: testHTTP(t, nil)})
	_, err := c.Complete(ctx(t), &llm.Request{Messages: []ctxwin.Message{{Role: "user", Content: "x"}}}, nil)
	var o *llm.OverflowError
	if !errors.As(err, &o) || o.PromptTokens != 5000 || o.Window != 4096 {
		t.Errorf("err = %v", err)
	}
}

func TestNotAChatCompletion(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			w.Write([]byte(`{"data":[{"id":"m"}]}`))
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html><body>Welcome to the captive portal</body></html>"))
	}))
	defer srv.Close()
	c, _ := New(Config{BaseURL: srv.URL + "/v1", CacheDir: t.TempDir(), HTTPClient: testHTTP(t, nil)})
	_, err := c.Complete(ctx(t), userReq("x"), nil)
	var a *APIError
	if !errors.As(err, &a) || !strings.Contains(err.Error(), "not a chat completion") || !strings.Contains(err.Error(), "captive portal") {
		t.Errorf("err = %v", err)
	}
}

func TestUnreachableKeepsTheSetting(t *testing.T) {
	c, _ := New(Config{BaseURL: "http://127.0.0.1:1/v1", ContextWindow: 24000, Model: "m", CacheDir: t.TempDir(), HTTPClient: testHTTP(t, nil)})
	info, err := c.Info(ctx(t))
	var u *llm.UnreachableError
	if !errors.As(err, &u) || info.Window != 24000 || info.WindowSource != llm.SourceSetting || info.Model != "m" {
		t.Errorf("info %+v err %v", info, err)
	}
}
