package enginetest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/internal/deptest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestDeps(t *testing.T) {
	// The fake speaks raw JSON: it must not share the client library whose
	// behaviour it is used to test.
	deptest.Forbid(t, ".", "github.com/sashabaranov/go-openai")
	for _, d := range deptest.Deps(t, ".") {
		if d == "github.com/reika-lsp/reika-lsp/agent" || d == "github.com/reika-lsp/reika-lsp/agent/engine" {
			t.Errorf("enginetest imports %s", d)
		}
	}
}

// client is a plain HTTP client with its own transport, closed by the test.
func client(t *testing.T) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

func start(t *testing.T, opts Options) (*Server, *http.Client) {
	t.Helper()
	s := New(opts)
	t.Cleanup(s.Close)
	return s, client(t)
}

func get(t *testing.T, c *http.Client, url string) (int, map[string]any) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

func post(t *testing.T, c *http.Client, url string, body any) (int, []byte, http.Header) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out, resp.Header
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("bad JSON %q: %v", b, err)
	}
	return m
}

// path walks a decoded JSON value: keys for objects, ints for arrays.
func path(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
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

type msg = map[string]any

func user(s string) msg { return msg{"role": "user", "content": s} }

func chatBody(msgs ...msg) map[string]any {
	return map[string]any{"model": DefaultModel, "messages": msgs}
}

func TestModelsListing(t *testing.T) {
	for _, tc := range []struct {
		shape            string
		window, nctx     any // expected data[0].meta.n_ctx and max_model_len
		ownedBy          string
		propsStatus      int
		propsNCtx        int
		topLevelModels   bool
		nCtxTrainPresent bool
	}{
		{ShapeLlamaCpp, 16384.0, nil, "llamacpp", 200, 16384, true, true},
		{ShapeLlamaCpp2025, nil, nil, "llamacpp", 200, 16384, false, true},
		{ShapeVLLM, nil, 16384.0, "vllm", 404, 0, false, false},
		{ShapeHosted, nil, nil, "system", 404, 0, false, false},
		{ShapeOllama, nil, nil, "library", 404, 0, false, false},
		{ShapeLMStudio, nil, nil, "organization_owner", 404, 0, false, false},
	} {
		t.Run(tc.shape, func(t *testing.T) {
			s, c := start(t, Options{Shape: tc.shape})
			st, m := get(t, c, s.URL()+"/models")
			if st != 200 {
				t.Fatalf("GET /v1/models: %d", st)
			}
			d := path(m, "data", 0)
			if path(d, "id") != DefaultModel || path(d, "owned_by") != tc.ownedBy {
				t.Errorf("data[0] = %v", d)
			}
			if got := path(d, "meta", "n_ctx"); got != tc.window {
				t.Errorf("meta.n_ctx = %v, want %v", got, tc.window)
			}
			if got := path(d, "max_model_len"); got != tc.nctx {
				t.Errorf("max_model_len = %v, want %v", got, tc.nctx)
			}
			if got := path(d, "meta", "n_ctx_train") != nil; got != tc.nCtxTrainPresent {
				t.Errorf("n_ctx_train present = %v", got)
			}
			if (m["models"] != nil) != tc.topLevelModels {
				t.Errorf("top-level models list present = %v", m["models"] != nil)
			}
			st, p := get(t, c, s.RootURL()+"/props")
			if st != tc.propsStatus {
				t.Errorf("GET /props: %d, want %d", st, tc.propsStatus)
			}
			if tc.propsNCtx != 0 && num(path(p, "default_generation_settings", "n_ctx")) != tc.propsNCtx {
				t.Errorf("/props n_ctx = %v", path(p, "default_generation_settings", "n_ctx"))
			}
		})
	}
}

func TestOllamaAndLMStudioDiscovery(t *testing.T) {
	s, c := start(t, Options{Shape: ShapeOllama, Window: 8192, Model: "qwen3:latest", Unloaded: true, OllamaNumCtx: true})
	_, ps := get(t, c, s.RootURL()+"/api/ps")
	if n := len(ps["models"].([]any)); n != 0 {
		t.Errorf("unloaded model listed by /api/ps: %v", ps)
	}
	st, body, _ := post(t, c, s.RootURL()+"/api/show", map[string]any{"model": "qwen3"})
	show := decode(t, body)
	if st != 200 || num(path(show, "model_info", "qwen3.context_length")) != 4*8192 || !strings.Contains(show["parameters"].(string), "num_ctx") {
		t.Errorf("/api/show: %d %v", st, show)
	}
	if st, _, _ := post(t, c, s.URL()+"/chat/completions", map[string]any{"model": "qwen3", "messages": []msg{user("hi")}}); st != 200 {
		t.Fatalf("chat: %d", st)
	}
	_, ps = get(t, c, s.RootURL()+"/api/ps")
	if num(path(ps, "models", 0, "context_length")) != 8192 {
		t.Errorf("/api/ps after load: %v", ps)
	}

	l, c2 := start(t, Options{Shape: ShapeLMStudio, Window: 4096, Unloaded: true})
	_, v0 := get(t, c2, l.RootURL()+"/api/v0/models")
	if path(v0, "data", 0, "state") != "not-loaded" || path(v0, "data", 0, "loaded_context_length") != nil {
		t.Errorf("unloaded v0 listing: %v", v0)
	}
	post(t, c2, l.URL()+"/chat/completions", chatBody(user("hi")))
	_, v0 = get(t, c2, l.RootURL()+"/api/v0/models")
	_, v1 := get(t, c2, l.RootURL()+"/api/v1/models")
	if num(path(v0, "data", 0, "loaded_context_length")) != 4096 || num(path(v1, "models", 0, "loaded_instances", 0, "config", "context_length")) != 4096 {
		t.Errorf("loaded listings: %v %v", v0, v1)
	}
}

func TestPrefixCache(t *testing.T) {
	s, c := start(t, Options{Script: Sequence(Text("First answer."), Text("Second answer."))})
	u := s.URL() + "/chat/completions"
	m1 := []msg{{"role": "system", "content": "You are terse."}, user("Say something.")}
	st, b, _ := post(t, c, u, chatBody(m1...))
	if st != 200 {
		t.Fatalf("%d %s", st, b)
	}
	r1 := decode(t, b)
	if num(path(r1, "timings", "cache_n")) != 0 {
		t.Errorf("cold cache_n = %v", path(r1, "timings", "cache_n"))
	}
	// Append the reply and a new question: everything before is reused.
	m2 := append(append([]msg{}, m1...), msg{"role": "assistant", "content": "First answer."}, user("And more?"))
	_, b, _ = post(t, c, u, chatBody(m2...))
	r2 := decode(t, b)
	recs := s.Requests()
	// The slot keeps the prompt and the reply, but not the end-of-turn
	// token generated last.
	slotLen := recs[0].PromptTokens + s.Tokens("First answer.")
	if c := num(path(r1, "usage", "completion_tokens")); c != s.Tokens("First answer.")+1 || slotLen != recs[0].PromptTokens+c-1 {
		t.Errorf("completion_tokens %d: want the reply's tokens and the end of turn", c)
	}
	cacheN, promptN := num(path(r2, "timings", "cache_n")), num(path(r2, "timings", "prompt_n"))
	if cacheN != slotLen {
		t.Errorf("append: cache_n = %d, want the whole slot %d", cacheN, slotLen)
	}
	if pt := num(path(r2, "usage", "prompt_tokens")); pt != cacheN+promptN || pt != recs[1].PromptTokens {
		t.Errorf("prompt_tokens %d != cache_n %d + prompt_n %d (recorded %d)", pt, cacheN, promptN, recs[1].PromptTokens)
	}
	if ct := num(path(r2, "usage", "prompt_tokens_details", "cached_tokens")); ct != cacheN {
		t.Errorf("cached_tokens %d != cache_n %d", ct, cacheN)
	}
	if ms := path(r2, "timings", "prompt_ms").(float64); ms != float64(promptN)*DefaultPromptMSPerToken {
		t.Errorf("prompt_ms %v for %d tokens", ms, promptN)
	}

	// Rewrite the system message: the cache is lost from there.
	m3 := append([]msg{{"role": "system", "content": "You are verbose."}}, m2[1:]...)
	_, b, _ = post(t, c, u, chatBody(m3...))
	r3 := decode(t, b)
	if n := num(path(r3, "timings", "cache_n")); n == 0 || n > 8 {
		t.Errorf("rewritten system message: cache_n = %d, want only the first few tokens", n)
	}
	// The same prompt again: all but one token reused (llama.cpp's n_past--).
	_, b, _ = post(t, c, u, chatBody(m3...))
	r4 := decode(t, b)
	if num(path(r4, "timings", "prompt_n")) != 1 || num(path(r4, "timings", "cache_n")) != num(path(r4, "usage", "prompt_tokens"))-1 {
		t.Errorf("repeated prompt: timings %v", r4["timings"])
	}
	// cache_prompt:false disables reuse.
	body := chatBody(m3...)
	body["cache_prompt"] = false
	_, b, _ = post(t, c, u, body)
	if n := num(path(decode(t, b), "timings", "cache_n")); n != 0 {
		t.Errorf("cache_prompt false: cache_n = %d", n)
	}
	s.Restart()
	_, b, _ = post(t, c, u, chatBody(m3...))
	if n := num(path(decode(t, b), "timings", "cache_n")); n != 0 {
		t.Errorf("after Restart: cache_n = %d", n)
	}
}

// TestHostMemoryCache: llama-server keeps earlier prompts in host memory
// and restores the one that serves a new prompt best, so a prompt that
// comes back after a detour is reused again — unless the cache is off.
func TestHostMemoryCache(t *testing.T) {
	for _, off := range []bool{false, true} {
		s, c := start(t, Options{NoHostCache: off})
		u := s.URL() + "/chat/completions"
		a := chatBody(msg{"role": "system", "content": "You are terse and exact."}, user("Say something about caches."))
		b := chatBody(msg{"role": "system", "content": "Entirely different words here."}, user("Something else."))
		post(t, c, u, a)
		post(t, c, u, b)
		_, out, _ := post(t, c, u, a)
		r := decode(t, out)
		cacheN, prompt := num(path(r, "timings", "cache_n")), num(path(r, "usage", "prompt_tokens"))
		if !off && cacheN != prompt-1 {
			t.Errorf("the first prompt again: cache_n %d of %d, want all but one restored", cacheN, prompt)
		}
		if off && cacheN > 8 {
			t.Errorf("without the host cache: cache_n %d", cacheN)
		}
		s.ResetSlot() // an eviction: host memory still has it
		_, out, _ = post(t, c, u, a)
		if n := num(path(decode(t, out), "timings", "cache_n")); !off && n != prompt-1 {
			t.Errorf("after an eviction: cache_n %d", n)
		}
	}
}

func TestCacheGranularity(t *testing.T) {
	long := strings.Repeat("The engine keeps the prefix of every request in its cache. ", 150)
	for _, tc := range []struct {
		shape string
		check func(cached any, prompt int) bool
	}{
		{ShapeVLLM, func(c any, p int) bool { return c != nil && num(c)%16 == 0 && num(c) > p-32 && num(c) < p }},
		{ShapeHosted, func(c any, p int) bool { return num(c)%128 == 0 && num(c) >= 1024 && num(c) > p-256 }},
		{ShapeLlamaCpp2025, func(c any, p int) bool { return c == nil }},
	} {
		t.Run(tc.shape, func(t *testing.T) {
			s, c := start(t, Options{Shape: tc.shape, Window: 100000})
			m := []msg{user(long)}
			_, b, _ := post(t, c, s.URL()+"/chat/completions", chatBody(m...))
			first := decode(t, b)
			if tc.shape == ShapeVLLM && path(first, "usage", "prompt_tokens_details") != nil {
				t.Errorf("vLLM reports a zero cached_tokens: %v", first["usage"])
			}
			m = append(m, msg{"role": "assistant", "content": "ok"}, user("next"))
			_, b, _ = post(t, c, s.URL()+"/chat/completions", chatBody(m...))
			r := decode(t, b)
			p := num(path(r, "usage", "prompt_tokens"))
			if cached := path(r, "usage", "prompt_tokens_details", "cached_tokens"); !tc.check(cached, p) {
				t.Errorf("cached_tokens %v of %d prompt tokens", cached, p)
			}
			if tc.shape == ShapeLlamaCpp2025 && path(r, "timings", "cache_n") == nil {
				t.Error("late-2025 llama.cpp reports no timings")
			}
		})
	}
}

func TestOverflow(t *testing.T) {
	long := strings.Repeat("word ", 400)
	for _, tc := range []struct {
		name      string
		opts      Options
		maxTokens int
		want      []string // substrings of the body
	}{
		{"llamacpp", Options{Window: 200}, 0, []string{`"type":"exceed_context_size_error"`, `"n_ctx":200`, `"n_prompt_tokens":`, `"code":400`, "exceeds the available context size (200 tokens)"}},
		{"llamacpp-2025", Options{Shape: ShapeLlamaCpp2025, Window: 200}, 0, []string{`"exceed_context_size_error"`, `"n_ctx":200`}},
		{"vllm-nested", Options{Shape: ShapeVLLM, Window: 600}, 500, []string{`{"error":{`, `"type":"BadRequestError"`, `"param":"input_tokens"`, "maximum context length is 600 tokens", "you requested 500 output tokens"}},
		{"vllm-flat", Options{Shape: ShapeVLLM, Window: 600, FlatErrors: true}, 500, []string{`"object":"error"`, "maximum context length is 600 tokens", "in the completion"}},
		{"vllm-prompt-only", Options{Shape: ShapeVLLM, Window: 200}, 0, []string{"context length is only 200 tokens"}},
		{"hosted", Options{Shape: ShapeHosted, Window: 200}, 0, []string{`"code":"context_length_exceeded"`, `"type":"invalid_request_error"`, "maximum context length is 200 tokens"}},
		{"lmstudio", Options{Shape: ShapeLMStudio, Window: 200}, 0, []string{"context length of only 200 tokens"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := start(t, tc.opts)
			body := chatBody(user(long))
			if tc.maxTokens > 0 {
				body["max_tokens"] = tc.maxTokens
			}
			st, b, _ := post(t, c, s.URL()+"/chat/completions", body)
			if st != 400 {
				t.Fatalf("status %d: %s", st, b)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("body lacks %s: %s", w, b)
				}
			}
			if !s.Requests()[0].Overflowed {
				t.Error("not recorded as overflowed")
			}
			// A short request still works afterwards, from a cold slot.
			st, b, _ = post(t, c, s.URL()+"/chat/completions", chatBody(user("hi")))
			if st != 200 {
				t.Fatalf("after overflow: %d %s", st, b)
			}
		})
	}
}

func TestOverflowStreamErrorLine(t *testing.T) {
	s, c := start(t, Options{Window: 100, StreamErrorLine: true})
	body := chatBody(user(strings.Repeat("word ", 200)))
	body["stream"] = true
	st, b, _ := post(t, c, s.URL()+"/chat/completions", body)
	if st != 200 {
		t.Fatalf("status %d", st)
	}
	text := string(b)
	if !strings.HasPrefix(text, "error: {") || !strings.Contains(text, `"n_ctx":100`) || !strings.HasSuffix(text, "data: [DONE]\n\n") {
		t.Errorf("stream: %q", text)
	}
}

func TestOllamaTruncatesSilently(t *testing.T) {
	s, c := start(t, Options{Shape: ShapeOllama, Window: 200})
	st, b, _ := post(t, c, s.URL()+"/chat/completions", chatBody(user(strings.Repeat("word ", 400))))
	if st != 200 {
		t.Fatalf("%d %s", st, b)
	}
	if pt := num(path(decode(t, b), "usage", "prompt_tokens")); pt != 100 {
		t.Errorf("prompt_tokens = %d, want the truncated 100", pt)
	}
	if rec := s.Requests()[0]; !rec.Overflowed || rec.PromptTokens <= 200 {
		t.Errorf("record: overflowed %v, prompt %d", rec.Overflowed, rec.PromptTokens)
	}
}

// sse reads a stream's data payloads and reports whether it ended with [DONE].
