package engine

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/agent/llm"
)

func TestWindowFromEndpoint(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   enginetest.Options
		engine string
		window int
		calls  []string // requests the discovery must have made, in order
	}{
		{"llama.cpp 2026 meta.n_ctx", enginetest.Options{Window: 24000}, EngineLlamaCpp, 24000, []string{"GET /v1/models", "GET /props"}},
		{"llama.cpp late 2025 /props", enginetest.Options{Shape: enginetest.ShapeLlamaCpp2025, Window: 12288}, EngineLlamaCpp, 12288, []string{"GET /v1/models", "GET /props"}},
		{"vLLM max_model_len", enginetest.Options{Shape: enginetest.ShapeVLLM, Window: 32768}, EngineVLLM, 32768, []string{"GET /v1/models"}},
		{"Ollama /api/ps", enginetest.Options{Shape: enginetest.ShapeOllama, Window: 8192, Model: "qwen3:latest"}, EngineOllama, 8192, []string{"GET /v1/models", "GET /api/ps"}},
		{"Ollama num_ctx", enginetest.Options{Shape: enginetest.ShapeOllama, Window: 16384, Unloaded: true, OllamaNumCtx: true}, EngineOllama, 16384, []string{"GET /v1/models", "GET /api/ps", "POST /api/show"}},
		{"LM Studio loaded_context_length", enginetest.Options{Shape: enginetest.ShapeLMStudio, Window: 4096}, EngineLMStudio, 4096, []string{"GET /v1/models", "GET /api/v0/models"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.opts)
			info := h.info()
			if info.Window != tc.window || info.WindowSource != llm.SourceEndpoint || info.Engine != tc.engine {
				t.Errorf("info = %+v, want window %d from the endpoint, engine %s", info, tc.window, tc.engine)
			}
			if info.Model != h.srv.Options().Model {
				t.Errorf("model %q, want the endpoint's only model %q", info.Model, h.srv.Options().Model)
			}
			if got := h.srv.Calls(); strings.Join(got, ",") != strings.Join(tc.calls, ",") {
				t.Errorf("requests %v, want %v", got, tc.calls)
			}
			// Cached: a second Info asks nothing.
			h.info()
			if n := len(h.srv.Calls()); n != len(tc.calls) {
				t.Errorf("second Info made %d more requests", n-len(tc.calls))
			}
		})
	}
}

func TestNCtxTrainIsNotTheWindow(t *testing.T) {
	h := newHarness(t, enginetest.Options{Shape: enginetest.ShapeLlamaCpp2025, Window: 8192, TrainedWindow: 131072})
	if info := h.info(); info.Window != 8192 {
		t.Errorf("window %d, want /props n_ctx 8192 (n_ctx_train is 131072)", info.Window)
	}
}

func TestSettingWins(t *testing.T) {
	h := newHarness(t, enginetest.Options{Window: 24000}, withWindow(16000))
	info := h.info()
	if info.Window != 16000 || info.WindowSource != llm.SourceSetting || info.Engine != EngineLlamaCpp {
		t.Errorf("info = %+v", info)
	}
}

func TestNotLoadedAskedAgain(t *testing.T) {
	for _, shape := range []string{enginetest.ShapeOllama, enginetest.ShapeLMStudio} {
		t.Run(shape, func(t *testing.T) {
			h := newHarness(t, enginetest.Options{Shape: shape, Window: 8192, TrainedWindow: 40960, Unloaded: true})
			info := h.info()
			if info.Window != 0 || info.WindowSource != llm.SourceNone || !strings.Contains(info.Reason, "not loaded") || !strings.Contains(info.Reason, "40960") {
				t.Errorf("unloaded: %+v", info)
			}
			if _, _, err := h.ask(userReq("hi")); err != nil {
				t.Fatal(err)
			}
			// The completion loaded the model; the next Info looks again.
			if info := h.info(); info.Window != 8192 || info.WindowSource != llm.SourceEndpoint {
				t.Errorf("after loading: %+v", info)
			}
		})
	}
}

func TestModelSelection(t *testing.T) {
	h := newHarness(t, enginetest.Options{Shape: enginetest.ShapeVLLM, Model: "Qwen/Qwen3-8B"}, withModel("qwen3"))
	_, err := h.c.Info(ctx(t))
	if err == nil || !strings.Contains(err.Error(), `"qwen3" is not served`) || !strings.Contains(err.Error(), "Qwen/Qwen3-8B") {
		t.Errorf("unlisted model: %v", err)
	}
	if _, _, err := h.ask(userReq("hi")); err == nil || !strings.Contains(err.Error(), "not served") {
		t.Errorf("Complete with an unlisted model: %v", err)
	}
	// Ollama's bare name matches its :latest tag.
	o := newHarness(t, enginetest.Options{Shape: enginetest.ShapeOllama, Model: "qwen3:latest"}, withModel("qwen3"))
	if info := o.info(); info.Model != "qwen3:latest" {
		t.Errorf("Ollama bare name: %+v", info)
	}
}

func TestSeveralModels(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"object":"list","data":[{"id":"a","owned_by":"vllm","max_model_len":1000},{"id":"b","owned_by":"vllm","max_model_len":2000}]}`))
	}))
	defer srv.Close()
	c, _ := New(Config{BaseURL: srv.URL + "/v1", CacheDir: t.TempDir(), HTTPClient: testHTTP(t, nil)})
	if _, err := c.Info(ctx(t)); err == nil || !strings.Contains(err.Error(), "several models: a, b") {
		t.Errorf("several models: %v", err)
	}
	c2, _ := New(Config{BaseURL: srv.URL + "/v1", Model: "b", CacheDir: t.TempDir(), HTTPClient: testHTTP(t, nil)})
	if info, err := c2.Info(ctx(t)); err != nil || info.Window != 2000 {
		t.Errorf("model b: %+v %v", info, err)
	}
	// llama.cpp router mode: the only loaded model is chosen, its window
	// comes from /props?model=.
	router := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			w.Write([]byte(`{"object":"list","data":[{"id":"m1","owned_by":"llamacpp","status":{"value":"unloaded"}},{"id":"m2","owned_by":"llamacpp","status":{"value":"loaded"}}]}`))
		case "/props":
			if r.URL.Query().Get("model") != "m2" {
				http.Error(w, "need model", 400)
				return
			}
			w.Write([]byte(`{"default_generation_settings":{"n_ctx":4096}}`))
		}
	}))
	defer router.Close()
	c3, _ := New(Config{BaseURL: router.URL + "/v1", CacheDir: t.TempDir(), HTTPClient: testHTTP(t, nil)})
	if info, err := c3.Info(ctx(t)); err != nil || info.Model != "m2" || info.Window != 4096 {
		t.Errorf("router mode: %+v %v", info, err)
	}
}

func TestLoRAWindowFromBase(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"object":"list","data":[{"id":"base","owned_by":"vllm","max_model_len":32768},{"id":"lora1","owned_by":"vllm","root":"base","parent":"base"}]}`))
	}))
	defer srv.Close()
	c, _ := New(Config{BaseURL: srv.URL + "/v1", Model: "lora1", CacheDir: t.TempDir(), HTTPClient: testHTTP(t, nil)})
	if info, err := c.Info(ctx(t)); err != nil || info.Window != 32768 {
		t.Errorf("LoRA adapter: %+v %v", info, err)
	}
}

// catalogServer serves a models.dev api.json and counts its requests.
func catalogServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Write([]byte(`{
			"openai": {"id":"openai","name":"OpenAI","models":{"gpt-4o":{"id":"gpt-4o","limit":{"context":128000,"output":16384}}}},
			"example": {"id":"example","api":"https://api.example.com/v1","models":{
				"fake-coder":{"id":"fake-coder","limit":{"context":200000,"output":64000}}}},
			"other": {"id":"other","models":{"fake-coder":{"id":"fake-coder","limit":{"context":100000,"output":8000}},
				"shared":{"id":"shared","limit":{"context":50000}}}},
			"third": {"id":"third","models":{"shared":{"id":"shared","limit":{"context":40000,"output":4000}}}}
		}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestCatalogNeverForLocalHosts proves that for loopback, private,
// link-local, .local and .internal endpoints the catalog server receives no
// request at all, while a hosted endpoint consults it.
func TestCatalogNeverForLocalHosts(t *testing.T) {
	cat, hits := catalogServer(t)
	for _, host := range []string{"127.0.0.1", "localhost", "[::1]", "10.1.2.3", "172.16.5.4", "192.168.1.20", "[fd00::1]",
		"169.254.10.1", "[fe80::1]", "gpu-box.local", "llm.internal", "100.100.1.1", "gpubox"} {
		t.Run(host, func(t *testing.T) {
			srv := enginetest.New(enginetest.Options{Shape: enginetest.ShapeHosted})
			defer srv.Close()
			addr := strings.TrimPrefix(srv.RootURL(), "http://")
			c, err := New(Config{
				BaseURL: "http://" + host + ":8080/v1", ModelsURL: cat.URL + "/api.json", CacheDir: t.TempDir(),
				HTTPClient: testHTTPAll(t, addr),
			})
			if err != nil {
				t.Fatal(err)
			}
			info, err := c.Info(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			if hits.Load() != 0 {
				t.Fatalf("the catalog was asked for %s", host)
			}
			if info.Window != 0 || info.WindowSource != llm.SourceNone || !strings.Contains(info.Reason, "local host") || !strings.Contains(info.Reason, "REIKA_CONTEXT_WINDOW") {
				t.Errorf("info = %+v", info)
			}
		})
	}
	// A hosted endpoint does ask, and takes the window and the output limit
	// of its own provider (matched by the catalog's api URL).
	srv := enginetest.New(enginetest.Options{Shape: enginetest.ShapeHosted})
	defer srv.Close()
	addr := strings.TrimPrefix(srv.RootURL(), "http://")
	c, _ := New(Config{BaseURL: "http://api.example.com/v1", ModelsURL: cat.URL + "/api.json", CacheDir: t.TempDir(), HTTPClient: testHTTP(t, func() string { return addr })})
	info, err := c.Info(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if hits.Load() != 1 || info.Window != 200000 || info.OutputLimit != 64000 || info.WindowSource != llm.SourceCatalog || info.Engine != EngineOpenAI {
		t.Errorf("hosted: %d catalog requests, info %+v", hits.Load(), info)
	}
}

// testHTTPAll routes every connection to addr.
func testHTTPAll(t *testing.T, addr string) *http.Client {
	d := &net.Dialer{}
	tr := &http.Transport{DialContext: func(ctx2 context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx2, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func TestIsLocalHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "::1": true, "localhost": true, "LOCALHOST.": true, "10.0.0.1": true, "172.31.0.1": true,
		"172.32.0.1": false, "192.168.0.1": true, "fd12::1": true, "fe80::1%eth0": true, "169.254.1.1": true,
		"0.0.0.0": true, "100.64.0.1": true, "nas.local": true, "x.internal": true, "box": true, "router.lan": true,
		"api.openai.com": false, "8.8.8.8": false, "2001:4860::8888": false, "openrouter.ai": false,
	} {
		if got := isLocalHost(host); got != want {
			t.Errorf("isLocalHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestCatalogLookup(t *testing.T) {
	cat, _ := catalogServer(t)
	for _, tc := range []struct {
		base, model     string
		context, output int
	}{
		{"http://api.openai.com/v1", "gpt-4o", 128000, 16384},      // known host
		{"http://api.example.com/v1", "fake-coder", 200000, 64000}, // the provider's api URL
		{"http://gateway.example.org/v1", "fake-coder", 100000, 8000},
		{"http://gateway.example.org/v1", "shared", 40000, 4000},        // the smallest of two providers
		{"http://gateway.example.org/v1", "vendor/shared", 40000, 4000}, // vendor/model
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"object":"list","data":[{"id":"` + tc.model + `","object":"model","owned_by":"system"}]}`))
		}))
		addr := strings.TrimPrefix(srv.URL, "http://")
		c, _ := New(Config{BaseURL: tc.base, ModelsURL: cat.URL, CacheDir: t.TempDir(), HTTPClient: testHTTP(t, func() string { return addr })})
		info, err := c.Info(ctx(t))
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		if info.Window != tc.context || info.OutputLimit != tc.output {
			t.Errorf("%s %s: %+v, want %d/%d", tc.base, tc.model, info, tc.context, tc.output)
		}
	}
}

func TestCatalogCachedOnDisk(t *testing.T) {
	cat, hits := catalogServer(t)
	engine := enginetest.New(enginetest.Options{Shape: enginetest.ShapeHosted, Model: "gpt-4o"})
	defer engine.Close()
	addr := strings.TrimPrefix(engine.RootURL(), "http://")
	dir := t.TempDir()
	newClient := func(modelsURL string, maxAge time.Duration) *Client {
		c, err := New(Config{BaseURL: "http://api.openai.com/v1", ModelsURL: modelsURL, CacheDir: dir, CatalogMaxAge: maxAge,
			HTTPClient: testHTTP(t, func() string { return addr })})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for i := 0; i < 2; i++ {
		info, err := newClient(cat.URL, time.Hour).Info(ctx(t))
		if err != nil || info.Window != 128000 {
			t.Fatalf("client %d: %+v %v", i, info, err)
		}
	}
	if hits.Load() != 1 {
		t.Errorf("catalog downloaded %d times, want once then cached", hits.Load())
	}
	files, _ := os.ReadDir(dir)
	if len(files) != 1 || !strings.HasPrefix(files[0].Name(), "models-dev-") {
		t.Errorf("cache dir holds %v", files)
	}
	// Stale and the server gone: the stale copy still answers.
	url := cat.URL
	cat.Close()
	info, err := newClient(url, time.Nanosecond).Info(ctx(t))
	if err != nil || info.Window != 128000 {
		t.Errorf("stale cache: %+v %v", info, err)
	}
	// Another URL has its own cache: nothing there, nothing answers.
	info, err = newClient("http://127.0.0.1:1/api.json", time.Hour).Info(ctx(t))
	if err != nil || info.WindowSource != llm.SourceNone || !strings.Contains(info.Reason, "catalog is unavailable") {
		t.Errorf("no catalog: %+v %v", info, err)
	}
}

func TestNoWindowReason(t *testing.T) {
	h := newHarness(t, enginetest.Options{Shape: enginetest.ShapeHosted})
	info := h.info()
	if info.Window != 0 || info.WindowSource != llm.SourceNone || info.Model != enginetest.DefaultModel {
		t.Errorf("info = %+v", info)
	}
	for _, want := range []string{"no context window found", "GET /v1/models states no window", "local host", "REIKA_CONTEXT_WINDOW"} {
		if !strings.Contains(info.Reason, want) {
			t.Errorf("reason %q lacks %q", info.Reason, want)
		}
	}
}

func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	c, _ := New(Config{BaseURL: "http://" + addr + "/v1", CacheDir: t.TempDir(), HTTPClient: testHTTP(t, nil), DownWait: -1})
	_, err = c.Info(ctx(t))
	var u *llm.UnreachableError
	if !errors.As(err, &u) {
		t.Fatalf("Info: %v, want an UnreachableError", err)
	}
	msg := err.Error()
	for _, want := range []string{"engine unreachable at http://" + addr + "/v1", "connection refused", "llama-server", "REIKA_BASE_URL"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	if _, err := c.Complete(ctx(t), userReq("hi"), nil); !errors.As(err, &u) {
		t.Errorf("Complete: %v", err)
	}
	// The hint names the setting where the user set the URL.
	for from, want := range map[string]string{
		"editor":        "set reika.baseUrl in the editor's settings",
		"env":           "set REIKA_BASE_URL to",
		"profile local": "set baseUrl in the local profile of config.toml",
		"":              "set REIKA_BASE_URL (reika.baseUrl in the editor)",
	} {
		c, _ := New(Config{BaseURL: "http://" + addr + "/v1", BaseURLFrom: from, CacheDir: t.TempDir(), HTTPClient: testHTTP(t, nil)})
		if _, err := c.Info(ctx(t)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("from %q: %v, want %q in it", from, err, want)
		}
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{BaseURL: "localhost:8080"},
		{BaseURL: "ftp://host/v1"},
		{BaseURL: "http://host/v1", ContextWindow: -1},
		{BaseURL: "http://host/v1", ModelsURL: "models.dev/api.json"},
		{BaseURL: "http://host/v1", ModelsURL: "file:///tmp/api.json"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
	_, err := New(Config{BaseURL: "http//sk-secret-key@host", APIKey: "sk-secret-key"})
	if err == nil || strings.Contains(err.Error(), "sk-secret-key") {
		t.Errorf("bad URL holding the key: %v", err)
	}
}

// TestCatalogNotForSelfHostedEngines: a vLLM server on a public address
// states its own window; the catalog is not asked.
func TestCatalogNotForSelfHostedEngines(t *testing.T) {
	cat, hits := catalogServer(t)
	srv := enginetest.New(enginetest.Options{Shape: enginetest.ShapeVLLM, Window: 32768})
	defer srv.Close()
	addr := strings.TrimPrefix(srv.RootURL(), "http://")
	c, _ := New(Config{BaseURL: "http://vllm.example.com/v1", ModelsURL: cat.URL, CacheDir: t.TempDir(), HTTPClient: testHTTP(t, func() string { return addr })})
	info, err := c.Info(ctx(t))
	if err != nil || info.Window != 32768 || info.Engine != EngineVLLM || info.OutputLimit != 0 || hits.Load() != 0 {
		t.Errorf("info %+v err %v, %d catalog requests", info, err, hits.Load())
	}
}

func TestBadAPIKey(t *testing.T) {
	h := newHarness(t, enginetest.Options{Shape: enginetest.ShapeHosted, APIKey: "sk-right-key"}, func(c *Config) { c.APIKey = "sk-wrong-key" })
	_, err := h.c.Info(ctx(t))
	if err == nil || !strings.Contains(err.Error(), "refused the API key") || !strings.Contains(err.Error(), "HTTP 401") || strings.Contains(err.Error(), "sk-wrong-key") {
		t.Errorf("err = %v", err)
	}
	ok := newHarness(t, enginetest.Options{Shape: enginetest.ShapeHosted, APIKey: "sk-right-key"}, func(c *Config) { c.APIKey = "sk-right-key" })
	if _, _, err := ok.ask(userReq("hi")); err != nil {
		t.Errorf("with the right key: %v", err)
	}
	if got := ok.srv.Requests()[0].Header.Get("Authorization"); got != "Bearer sk-right-key" {
		t.Errorf("Authorization %q", got)
	}
}
