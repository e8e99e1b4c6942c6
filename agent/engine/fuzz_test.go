package engine

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/agent/llm"
)

// Fuzz tests for every parser of engine output: no input may panic. The
// seeds are the engines' real shapes.

var modelsSeeds = []string{
	`{"models":[{"name":"q","model":"q"}],"object":"list","data":[{"id":"qwen3-coder","aliases":["qwen3-coder"],"tags":[],"object":"model","created":1780564859,"owned_by":"llamacpp","meta":{"vocab_type":2,"n_vocab":151936,"n_ctx":65536,"n_ctx_train":262144,"n_embd":2048,"n_params":30532122624,"size":17280000000,"ftype":"Q4_K_M"}}]}`,
	`{"object":"list","data":[{"id":"../models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf","object":"model","created":1735142223,"owned_by":"llamacpp","meta":null}]}`,
	`{"object":"list","data":[{"id":"Qwen/Qwen2.5-7B-Instruct","object":"model","owned_by":"vllm","root":"Qwen/Qwen2.5-7B-Instruct","parent":null,"max_model_len":32768,"permission":[]}]}`,
	`{"object":"list","data":[{"id":"m1","owned_by":"llamacpp","status":{"value":"loaded","args":["-c","4096"]}}]}`,
	`{"object":"list","data":[{"id":"meta-llama-3.1-8b-instruct","object":"model","type":"llm","state":"loaded","max_context_length":131072,"loaded_context_length":8192}]}`,
	`{"data":[{"id":"x","context_length":"128000"}]}`,
	`{"data":{}}`, `[]`, `null`, `{"data":[{"id":5,"meta":{"n_ctx":1e999}}]}`,
}

func FuzzParseModels(f *testing.F) {
	for _, s := range modelsSeeds {
		f.Add([]byte(s), "qwen3-coder")
	}
	f.Fuzz(func(t *testing.T, body []byte, model string) {
		l, ok := parseModels(body)
		if !ok {
			return
		}
		for _, e := range l.Data {
			if n, _ := e.window(); n < 0 {
				t.Fatalf("negative window %d", n)
			}
			e.loaded()
		}
		l.ids()
		if e, ok := l.find(model); ok {
			c := &Client{}
			c.listingWindow(l, e)
		}
	})
}

func FuzzParseProps(f *testing.F) {
	f.Add([]byte(`{"default_generation_settings":{"id":0,"id_task":-1,"n_ctx":1024,"speculative":false,"is_processing":false,"params":{"n_predict":-1}},"total_slots":1,"model_path":"m.gguf","build_info":"b1-abc"}`))
	f.Add([]byte(`{"default_generation_settings":{"n_ctx":"4096"}}`))
	f.Add([]byte(`{"default_generation_settings":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if n, ok := parseProps(body); ok && n <= 0 {
			t.Fatalf("ok with window %d", n)
		}
	})
}

func FuzzLocalListings(f *testing.F) {
	f.Add([]byte(`{"models":[{"name":"qwen3:latest","model":"qwen3:latest","size":1,"context_length":131072,"expires_at":"2026-01-01T00:00:00Z"}]}`), "qwen3")
	f.Add([]byte(`{"parameters":"num_ctx 16384\nstop \"<|im_end|>\"","model_info":{"general.architecture":"qwen3","qwen3.context_length":40960}}`), "x")
	f.Add([]byte(`{"object":"list","data":[{"id":"m","state":"loaded","loaded_context_length":4096,"max_context_length":32768}]}`), "m")
	f.Add([]byte(`{"models":[{"type":"llm","key":"m","loaded_instances":[{"id":"m","config":{"context_length":4096}}],"max_context_length":32768}]}`), "m")
	f.Fuzz(func(t *testing.T, body []byte, model string) {
		parseOllamaPS(body, model)
		if numCtx, trained := parseOllamaShow(body); numCtx < 0 || trained < 0 {
			t.Fatalf("negative %d %d", numCtx, trained)
		}
		parseLMStudioV0(body, model)
		parseLMStudioV1(body, model)
	})
}

func FuzzCatalog(f *testing.F) {
	f.Add([]byte(`{"openai":{"id":"openai","models":{"gpt-4o":{"id":"gpt-4o","limit":{"context":128000,"output":16384}}}},"x":{"api":"https://api.x.example/v1","models":{"m":{"limit":{"context":"9"}}}}}`), "gpt-4o", "https://api.openai.com/v1")
	f.Add([]byte(`{"a":[],"b":{"models":null}}`), "a/b", "http://h")
	f.Fuzz(func(t *testing.T, data []byte, model, base string) {
		u, _ := url.Parse(base)
		if lim, _, ok := lookupCatalog(data, u, model); ok && lim.context <= 0 {
			t.Fatalf("found with context %d", lim.context)
		}
	})
}

func FuzzParseChunk(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"created":1,"id":"chatcmpl-1","model":"m","system_fingerprint":"b1","object":"chat.completion.chunk"}`,
		`{"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"id":"abc","type":"function","function":{"name":"read_file","arguments":""}}]}}],"object":"chat.completion.chunk"}`,
		`{"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}}],"object":"chat.completion.chunk"}`,
		`{"choices":[{"index":0,"delta":{"reasoning":"hmm"},"logprobs":null,"finish_reason":null}]}`,
		`{"choices":[{"finish_reason":"tool_calls","index":0,"delta":{}}],"object":"chat.completion.chunk"}`,
		`{"choices":[],"usage":{"completion_tokens":35,"prompt_tokens":237,"total_tokens":272,"prompt_tokens_details":{"cached_tokens":236}},"timings":{"cache_n":236,"prompt_n":1,"prompt_ms":30.958,"predicted_n":35}}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":-1,"function":{"arguments":"x"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":99999999999,"function":{"arguments":"x"}}]}}]}`,
		`{"usage":{"prompt_tokens":"12","prompt_cache_hit_tokens":10}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		acc := newAccumulator()
		for i := 0; i < 2; i++ { // twice: accumulation across chunks
			c, err := parseChunk(raw)
			if err != nil {
				return
			}
			acc.add(c, func(llm.Delta) {})
		}
		m := acc.message()
		for _, tc := range m.ToolCalls {
			if tc.ID == "" {
				t.Fatal("a tool call without an id")
			}
		}
		if u := usageOf(acc.usage, acc.timings); u != nil && u.CachedKnown && acc.usage == nil && acc.timings == nil {
			t.Fatal("cached known from nothing")
		}
		timingsOf(acc.timings)
	})
}

func FuzzParseErrorBody(f *testing.F) {
	for _, s := range []string{
		`{"error":{"code":400,"message":"request (17993 tokens) exceeds the available context size (16384 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":17993,"n_ctx":16384}}`,
		`{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 8192 tokens (4096 in the messages, 4096 in the completion).","type":"BadRequestError","param":null,"code":400}`,
		`{"error":{"message":"x","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
		`{"error":"model not found"}`, `{"detail":[{"msg":"field required"}]}`, `<html>502</html>`, `{"error":{"message":["a","b"]}}`,
		`{"error":{"message":{"nested":1},"code":{"x":1},"n_ctx":"12"}}`,
	} {
		f.Add(400, []byte(s))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		info := parseErrorBody(body)
		prompt, window, ok := info.overflow(status)
		if !ok && (prompt != 0 || window != 0) || prompt < 0 || window < 0 {
			t.Fatalf("overflow %v prompt %d window %d", ok, prompt, window)
		}
		c := &Client{}
		if err := c.errorFromInfo(status, info, &capture{header: http.Header{"Retry-After": {string(body)}}}); err == nil {
			t.Fatal("no error")
		}
	})
}

// bodyTransport answers every request with the same body.
type bodyTransport struct {
	status      int
	contentType string
	body        []byte
}

func (b bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	body := b.body
	ct := b.contentType
	if strings.HasSuffix(r.URL.Path, "/models") {
		body, ct = []byte(`{"data":[{"id":"m","owned_by":"llamacpp","meta":{"n_ctx":4096}}]}`), "application/json"
	}
	return &http.Response{StatusCode: b.status, Header: http.Header{"Content-Type": {ct}}, Body: io.NopCloser(bytes.NewReader(body)), Request: r}, nil
}

// FuzzComplete feeds arbitrary response bodies, streamed and not, through
// the whole client, go-openai included.
func FuzzComplete(f *testing.F) {
	f.Add(200, "text/event-stream", []byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"))
	f.Add(200, "text/event-stream", []byte("error: {\"code\":400,\"type\":\"exceed_context_size_error\",\"n_ctx\":4}\n\ndata: [DONE]\n\n"))
	f.Add(200, "text/event-stream", []byte(": ping\n\ndata: {\"error\":{\"message\":\"boom\"}}\n\n"))
	f.Add(200, "application/json", []byte(`{"choices":[{"finish_reason":"stop","index":0,"message":{"role":"assistant","content":"x","reasoning":"r"}}],"usage":{"prompt_tokens":3},"timings":{"cache_n":1,"prompt_n":2}}`))
	f.Add(400, "application/json", []byte(`{"error":{"type":"exceed_context_size_error","n_ctx":10,"n_prompt_tokens":20}}`))
	f.Add(503, "text/html", []byte(`<html>down</html>`))
	f.Fuzz(func(t *testing.T, status int, contentType string, body []byte) {
		if status < 100 || status > 599 {
			return
		}
		c, err := New(Config{BaseURL: "http://127.0.0.1:9/v1", CacheDir: t.TempDir(),
			HTTPClient: &http.Client{Transport: bodyTransport{status, contentType, body}},
			Retry:      Retry{Attempts: 2, Base: time.Nanosecond, Max: time.Nanosecond}})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Complete(context.Background(), userReq("x"), func(llm.Delta) {})
		if err == nil && resp == nil {
			t.Fatal("no response and no error")
		}
	})
}
