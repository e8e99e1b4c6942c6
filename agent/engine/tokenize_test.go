package engine

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/agent/llm"
)

func tokenizeCalls(srv *enginetest.Server) int {
	n := 0
	for _, c := range srv.Calls() {
		if c == "POST /tokenize" {
			n++
		}
	}
	return n
}

// TestCountTokens counts with the engine's tokenizer in one request per
// call: llama.cpp gives each text its own count (from the pieces), vLLM's
// count is shared out by bytes.
func TestCountTokens(t *testing.T) {
	code, err := os.ReadFile("tokenize.go")
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{string(code), "A short line of prose for the agent to read.", "", "上下文管理"}
	for _, shape := range []string{enginetest.ShapeLlamaCpp, enginetest.ShapeLlamaCpp2025, enginetest.ShapeVLLM} {
		t.Run(shape, func(t *testing.T) {
			h := newHarness(t, enginetest.Options{Shape: shape, CodeCharsPerToken: 2.5})
			got, err := h.c.CountTokens(ctx(t), texts)
			if err != nil {
				t.Fatal(err)
			}
			if n := tokenizeCalls(h.srv); n != 1 {
				t.Errorf("%d /tokenize requests for one call", n)
			}
			want := h.srv.Tokens(strings.Join(texts, "\n"))
			sum := 0
			for i, n := range got {
				sum += n
				exact := h.srv.Tokens(texts[i])
				slack := 1 // a token across a joint
				if shape == enginetest.ShapeVLLM {
					slack = exact/4 + 2 // shared by bytes
				}
				if n < exact-slack || n > exact+slack {
					t.Errorf("text %d: %d tokens, its own count is %d", i, n, exact)
				}
			}
			if len(got) != len(texts) || sum < want-2 || sum > want+2 {
				t.Errorf("counts %v sum to %d, the engine counts %d for the texts", got, sum, want)
			}
		})
	}
}

// TestCountTokensWithout: hosted endpoints, Ollama and LM Studio have no
// tokenizer and are not asked; an engine that answers 404 is asked once.
func TestCountTokensWithout(t *testing.T) {
	for _, o := range []enginetest.Options{{Shape: enginetest.ShapeHosted}, {Shape: enginetest.ShapeOllama}, {Shape: enginetest.ShapeLMStudio},
		{Shape: enginetest.ShapeLlamaCpp, NoTokenize: true}, {Shape: enginetest.ShapeVLLM, NoTokenize: true}} {
		h := newHarness(t, o)
		for range 2 {
			if _, err := h.c.CountTokens(ctx(t), []string{"x"}); !errors.Is(err, llm.ErrNoTokenizer) {
				t.Errorf("%s (NoTokenize %v): %v, want ErrNoTokenizer", o.Shape, o.NoTokenize, err)
			}
		}
		want := 0
		if o.NoTokenize {
			want = 1
		}
		if n := tokenizeCalls(h.srv); n != want {
			t.Errorf("%s (NoTokenize %v): %d /tokenize requests, want %d", o.Shape, o.NoTokenize, n, want)
		}
	}
}

// TestCountTokensFails: an engine whose /tokenize fails gives an error that
// is not ErrNoTokenizer (the agent logs it once and estimates), and the
// next call asks again.
func TestCountTokensFails(t *testing.T) {
	srv := enginetest.New(enginetest.Options{})
	defer srv.Close()
	var calls atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/tokenize" {
			calls.Add(1)
			http.Error(w, `{"error":{"code":500,"message":"busy","type":"server_error"}}`, http.StatusInternalServerError)
			return
		}
		resp, err := http.Get(srv.RootURL() + r.URL.Path)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		var v any
		json.NewDecoder(resp.Body).Decode(&v)
		w.WriteHeader(resp.StatusCode)
		json.NewEncoder(w).Encode(v)
	}))
	defer front.Close()
	c, err := New(Config{BaseURL: front.URL + "/v1", CacheDir: t.TempDir(), ModelsURL: "http://127.0.0.1:1/never", HTTPClient: testHTTP(t, nil)})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := c.CountTokens(ctx(t), []string{"x"}); err == nil || errors.Is(err, llm.ErrNoTokenizer) {
			t.Errorf("a failing /tokenize: %v", err)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d /tokenize requests, want 2", n)
	}
}

func TestPieceLen(t *testing.T) {
	for raw, want := range map[string]int{
		`{"id":1,"piece":"hello"}`:      5,
		`{"id":1,"piece":[226,130]}`:    2,
		`{"id":1,"piece":"上"}`:          3,
		`17`:                            0,
		`{"id":1}`:                      0,
		`{"id":1,"piece":{"odd":true}}`: 0,
	} {
		if got := pieceLen(json.RawMessage(raw)); got != want {
			t.Errorf("pieceLen(%s) = %d, want %d", raw, got, want)
		}
	}
	if got := shareByBytes(10, []string{"aaaa", "", "a"}); !slices.Equal(got, []int{8, 0, 2}) {
		t.Errorf("shareByBytes = %v", got)
	}
}

// connRequests counts the requests served on one connection.
type connRequests struct{ n atomic.Int32 }

type connKey struct{}

// TestCountTokensOnAClosedConnection: the server closes a kept-alive
// connection when the next request arrives on it, without an answer (as
// llama-server does to some after an error). The count is asked again on a
// new connection rather than failing.
func TestCountTokensOnAClosedConnection(t *testing.T) {
	fake := enginetest.New(enginetest.Options{Shape: enginetest.ShapeLlamaCpp})
	t.Cleanup(fake.Close)
	var closed atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/tokenize" && r.Context().Value(connKey{}).(*connRequests).n.Add(1) == 2 {
			closed.Add(1)
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		fake.ServeHTTP(w, r)
	}))
	srv.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, &connRequests{})
	}
	srv.Start()
	t.Cleanup(srv.Close)
	c, err := New(Config{BaseURL: srv.URL + "/v1", CacheDir: t.TempDir(), ModelsURL: "http://127.0.0.1:1/never", HTTPClient: testHTTP(t, nil)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := c.CountTokens(ctx(t), []string{"one text", "and another"}); err != nil {
			t.Fatalf("count %d: %v", i+1, err)
		}
	}
	if closed.Load() == 0 {
		t.Error("the server never closed a connection under a request")
	}
}
