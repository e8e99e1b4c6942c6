package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.uber.org/goleak"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/lsp/lsptest"
	"github.com/reika-lsp/reika-lsp/lsp/lsptest/scripted"
)

// hangGuard bounds every wait in these tests. It is never a speed target:
// a test that hits it has hung.
const hangGuard = 10 * time.Second

// fakeAgent is the scripted agent.Service the server runs over in these
// tests; by default its turn is twoRounds.
type fakeAgent = scripted.Agent

func newFakeAgent(opts agent.Options) *fakeAgent {
	f := scripted.New(opts)
	f.Turn = twoRounds
	return f
}

// twoRounds is the default turn: the user event, two rounds each with a
// streamed reply, a progress report and a status, then done.
func twoRounds(ctx context.Context, f *fakeAgent, p agent.AskParams) agent.AskResult {
	ev := f.Opts.Events
	turn := f.Turns()
	ev.Transcript(agent.Event{Session: f.Session(), Turn: turn, Kind: agent.EventUser, Text: p.Prompt})
	for round := 1; round <= 2; round++ {
		ev.Transcript(agent.Event{Session: f.Session(), Turn: turn, Round: round, Kind: agent.EventAssistant, Text: "hel", Delta: true})
		ev.Transcript(agent.Event{Session: f.Session(), Turn: turn, Round: round, Kind: agent.EventAssistant, Text: "lo", Delta: true})
		ev.Transcript(agent.Event{Session: f.Session(), Turn: turn, Round: round, Kind: agent.EventAssistant, Text: "hello", Tokens: 7})
		ev.Progress(agent.Progress{Turn: turn, Round: round, Text: fmt.Sprintf("round %d · ctx %dk/24k", round, round)})
		ev.Status(f.Resize(round * 1000))
	}
	return agent.AskResult{Session: f.Session(), Status: agent.AskDone}
}

// untilCancelled is a turn that reports one round, then runs until it is
// cancelled. started is closed once the round is reported.
func untilCancelled(started chan<- struct{}) func(context.Context, *fakeAgent, agent.AskParams) agent.AskResult {
	return func(ctx context.Context, f *fakeAgent, p agent.AskParams) agent.AskResult {
		ev := f.Opts.Events
		ev.Transcript(agent.Event{Session: f.Session(), Turn: f.Turns(), Kind: agent.EventUser, Text: p.Prompt})
		ev.Progress(agent.Progress{Turn: 1, Round: 1, Text: "round 1"})
		ev.Status(f.Resize(1000))
		close(started)
		<-ctx.Done()
		return agent.AskResult{Session: f.Session(), Status: agent.AskCancelled}
	}
}

// harness is one server in-process, driven through a pipe by a test client.
type harness struct {
	t      testing.TB
	c      *lsptest.Client
	ctx    context.Context // the hang guard
	root   string
	state  string // the server's state directory (bug reports)
	served chan error
	exits  chan int
	log    *testLog

	mu     sync.Mutex
	agents []*fakeAgent // every agent NewAgent built; guarded by mu
}

type harnessOptions struct {
	hooks lsptest.Hooks
	// setup adjusts each fake agent NewAgent builds.
	setup func(*fakeAgent)
	// newAgent replaces the fake agent's constructor.
	newAgent func(agent.Options) (agent.Service, error)
}

// testLog collects the server's log; a failed test prints it.
type testLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *testLog) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *testLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func (l *testLog) contains(s string) bool { return strings.Contains(l.String(), s) }

// start runs a server and connects a client. Cleanup closes the client,
// waits for Serve to return and checks that no goroutine is left.
func start(t testing.TB, o harnessOptions) *harness {
	t.Helper()
	// Goroutines that exist before the server starts (the fuzzing engine's)
	// are not this test's; every one the server and client start must end.
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	t.Cleanup(cancel)
	h := &harness{t: t, ctx: ctx, root: t.TempDir(), state: t.TempDir(), served: make(chan error, 1), exits: make(chan int, 1), log: &testLog{}}
	if real, err := filepath.EvalSymlinks(h.root); err == nil {
		h.root = real
	}
	cfg := Config{
		Version:    "test",
		Logf:       h.log.logf,
		Exit:       func(code int) { h.exits <- code },
		Getenv:     func(string) (string, bool) { return "", false },
		ConfigFile: filepath.Join(t.TempDir(), "config.toml"),
		StateDir:   h.state,
		NewAgent: func(opts agent.Options) (agent.Service, error) {
			if o.newAgent != nil {
				return o.newAgent(opts)
			}
			f := newFakeAgent(opts)
			if o.setup != nil {
				o.setup(f)
			}
			h.mu.Lock()
			h.agents = append(h.agents, f)
			h.mu.Unlock()
			return f, nil
		},
	}
	serverEnd, clientEnd := lsptest.Pipe()
	go func() { h.served <- Serve(context.Background(), serverEnd, cfg) }()
	h.c = lsptest.Connect(clientEnd, o.hooks)
	t.Cleanup(func() {
		h.c.Disconnect()
		select {
		case <-h.served:
		case <-time.After(hangGuard):
			t.Errorf("Serve did not return after the client closed the connection")
		}
		if t.Failed() {
			t.Logf("server log:\n%s", h.log)
		}
	})
	return h
}

// agent returns the (last) fake agent, waiting for it to be built.
func (h *harness) agent() *fakeAgent {
	h.t.Helper()
	for {
		h.mu.Lock()
		n := len(h.agents)
		var f *fakeAgent
		if n > 0 {
			f = h.agents[n-1]
		}
		h.mu.Unlock()
		if f != nil {
			return f
		}
		select {
		case <-h.ctx.Done():
			h.t.Fatal("no agent was built")
		case <-time.After(time.Millisecond):
		}
	}
}

// fullCaps are the capabilities of a client that supports everything the
// server uses.
func fullCaps() map[string]any {
	return map[string]any{
		"workspace": map[string]any{
			"applyEdit":     true,
			"workspaceEdit": map[string]any{"documentChanges": true, "resourceOperations": []string{"create", "rename", "delete"}},
			"configuration": true,
		},
		"window": map[string]any{
			"workDoneProgress": true,
			"showMessage":      map[string]any{"messageActionItem": map[string]any{"additionalPropertiesSupport": false}},
		},
	}
}

// initialize runs initialize (with caps, or fullCaps when nil, and the
// given initializationOptions) and initialized, and waits for the agent's
// status notification.
func (h *harness) initialize(caps map[string]any, initOptions any) json.RawMessage {
	h.t.Helper()
	if caps == nil {
		caps = fullCaps()
	}
	params := map[string]any{
		"processId":        nil,
		"rootUri":          "file://" + h.root,
		"capabilities":     caps,
		"clientInfo":       map[string]any{"name": "lsptest"},
		"workspaceFolders": []any{map[string]any{"uri": "file://" + h.root, "name": "root"}},
	}
	if initOptions != nil {
		params["initializationOptions"] = initOptions
	}
	var result json.RawMessage
	if err := h.c.Call(h.ctx, "initialize", params, &result); err != nil {
		h.t.Fatalf("initialize: %v", err)
	}
	if err := h.c.Notify(h.ctx, "initialized", map[string]any{}); err != nil {
		h.t.Fatalf("initialized: %v", err)
	}
	return result
}

// initialized initializes with full capabilities and waits for the agent.
func (h *harness) initialized() *fakeAgent {
	h.t.Helper()
	h.initialize(nil, nil)
	return h.agent()
}

// command runs workspace/executeCommand and decodes the result.
func (h *harness) command(name string, args []any, result any) error {
	return h.c.Command(h.ctx, name, args, result)
}

// mustCommand is command failing the test on error.
func (h *harness) mustCommand(name string, args []any, result any) {
	h.t.Helper()
	if err := h.command(name, args, result); err != nil {
		h.t.Fatalf("%s: %v", name, err)
	}
}

// waitNote waits for a notification matching match.
func (h *harness) waitNote(method string, match func(lsptest.Message) bool) lsptest.Message {
	h.t.Helper()
	m, err := h.c.WaitNote(h.ctx, method, match)
	if err != nil {
		h.t.Fatalf("no %s notification: %v", method, err)
	}
	return m
}

// shutdownExit sends shutdown and exit and returns the exit status and
// Serve's error.
func (h *harness) shutdownExit(shutdown bool) (int, error) {
	h.t.Helper()
	if shutdown {
		if err := h.c.Call(h.ctx, "shutdown", nil, nil); err != nil {
			h.t.Fatalf("shutdown: %v", err)
		}
	}
	if err := h.c.Notify(h.ctx, "exit", nil); err != nil {
		h.t.Fatalf("exit: %v", err)
	}
	var code int
	select {
	case code = <-h.exits:
	case <-h.ctx.Done():
		h.t.Fatal("no exit after the exit notification")
	}
	select {
	case err := <-h.served:
		h.served <- err // for the cleanup
		return code, err
	case <-h.ctx.Done():
		h.t.Fatal("Serve did not return after exit")
	}
	return 0, nil
}

// rpcCode returns the JSON-RPC error code of err (0 when it has none).
func rpcCode(err error) int {
	var wire *jsonrpc2.Error
	if errors.As(err, &wire) {
		return int(wire.Code)
	}
	return 0
}

func decode[T any](t *testing.T, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	return v
}
