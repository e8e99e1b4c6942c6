package engine

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
	"github.com/reika-lsp/reika-lsp/internal/deptest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestDeps(t *testing.T) {
	deptest.Forbid(t, ".", "go.lsp.dev", "github.com/reika-lsp/reika-lsp/lsp", "github.com/reika-lsp/reika-lsp/agent/enginetest")
	// The engine implements the model contract (agent/llm) and knows
	// nothing of the agent: no sessions, no tools, no tree-sitter.
	deptest.ForbidPackage(t, ".", "github.com/reika-lsp/reika-lsp/agent")
	deptest.Forbid(t, ".", "github.com/reika-lsp/reika-lsp/agent/tools", "github.com/reika-lsp/reika-lsp/outline", "github.com/smacker/go-tree-sitter")
	// The contract itself is a leaf: the standard library and ctxwin's
	// message types.
	for _, d := range deptest.Deps(t, "github.com/reika-lsp/reika-lsp/agent/llm") {
		if d != "github.com/reika-lsp/reika-lsp/agent/llm" && d != "github.com/reika-lsp/reika-lsp/ctxwin" {
			t.Errorf("agent/llm imports %s", d)
		}
	}
	// agent/engine is the only importer of go-openai: agent must not.
	deptest.Forbid(t, "github.com/reika-lsp/reika-lsp/agent", "github.com/sashabaranov/go-openai", "github.com/reika-lsp/reika-lsp/agent/engine")
}

// logs collects log lines.
type logs struct {
	mu    sync.Mutex
	lines []string
}

func (l *logs) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// harness is a client against a fake engine.
type harness struct {
	t      *testing.T
	srv    *enginetest.Server
	c      *Client
	logs   *logs
	sleeps []time.Duration
}

type option func(*Config)

func withModel(m string) option { return func(c *Config) { c.Model = m } }
func withWindow(n int) option   { return func(c *Config) { c.ContextWindow = n } }

// newHarness starts a fake engine with opts and a client for it. The
// client's retry waits are recorded instead of slept.
func newHarness(t *testing.T, opts enginetest.Options, mods ...option) *harness {
	t.Helper()
	srv := enginetest.New(opts)
	t.Cleanup(srv.Close)
	h := &harness{t: t, srv: srv, logs: &logs{}}
	cfg := Config{BaseURL: srv.URL(), CacheDir: t.TempDir(), ModelsURL: "http://127.0.0.1:1/never", Logf: h.logs.logf,
		HTTPClient: testHTTP(t, nil)}
	for _, m := range mods {
		m(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.sleep = func(ctx context.Context, d time.Duration) error {
		h.sleeps = append(h.sleeps, d)
		return ctx.Err()
	}
	h.c = c
	return h
}

// testHTTP is an HTTP client whose connections close with the test. With
// route set, connections to any host other than 127.0.0.1 go to route (a
// host:port), so a test can give the engine any hostname.
func testHTTP(t *testing.T, route func() string) *http.Client {
	d := &net.Dialer{}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if route != nil && !strings.HasPrefix(addr, "127.0.0.1:") {
			addr = route()
		}
		return d.DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute) // hang guard
	t.Cleanup(cancel)
	return c
}

func (h *harness) info() llm.ModelInfo {
	h.t.Helper()
	info, err := h.c.Info(ctx(h.t))
	if err != nil {
		h.t.Fatalf("Info: %v", err)
	}
	return info
}

// ask sends one user message (with the read tool) and collects deltas.
func (h *harness) ask(req *llm.Request) (*llm.Response, []llm.Delta, error) {
	h.t.Helper()
	var deltas []llm.Delta
	resp, err := h.c.Complete(ctx(h.t), req, func(d llm.Delta) { deltas = append(deltas, d) })
	return resp, deltas, err
}

var readTool = ctxwin.ToolSpec{Name: "read", Description: "Read a file.", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}

func userReq(text string) *llm.Request {
	return &llm.Request{
		Messages: []ctxwin.Message{{Role: ctxwin.RoleSystem, Content: "You are a coding agent."}, {Role: ctxwin.RoleUser, Content: text}},
		Tools:    []ctxwin.ToolSpec{readTool},
	}
}
