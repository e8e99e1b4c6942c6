package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/internal/gguf"
	"github.com/reika-lsp/reika-lsp/internal/llamaserver"
)

// reader reads a.txt on [[read]]; the file holds [[done]], on which it
// answers.
var reader = gguf.ToolCaller{
	Default: []string{"Nothing to do."},
	Actions: []gguf.Action{
		{Signal: "[[read]]", Pieces: []string{gguf.CallText("read", `{"path": "a.txt"}`)}},
		{Signal: "[[done]]", Pieces: []string{"All read."}},
	},
}

// killingModel stops the server before the turn's second request, as an
// engine killed mid-turn (out of memory, a restart for another model).
type killingModel struct {
	*Client
	srv *llamaserver.Server
	mu  sync.Mutex
	n   int
}

func (m *killingModel) Complete(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	m.mu.Lock()
	m.n++
	kill := m.n == 2
	m.mu.Unlock()
	if kill {
		m.srv.Stop()
	}
	return m.Client.Complete(ctx, req, onDelta)
}

// statusEvents keeps the statuses and says when one holds the down text.
type statusEvents struct {
	mu       sync.Mutex
	statuses []agent.Status
	down     chan struct{}
	once     sync.Once
}

func (e *statusEvents) Transcript(agent.Event)  {}
func (e *statusEvents) Notice(agent.Notice)     {}
func (e *statusEvents) Progress(agent.Progress) {}
func (e *statusEvents) Status(s agent.Status) {
	e.mu.Lock()
	e.statuses = append(e.statuses, s)
	e.mu.Unlock()
	if strings.HasSuffix(s.Text, " · "+agent.DownText) {
		e.once.Do(func() { close(e.down) })
	}
}

// TestRealEngineRestartMidTurn: a turn on llama-server whose server is
// stopped after the first round and started again on the same port: the
// turn waits, its status and the client's log say "engine unreachable,
// retrying" (the log once), and it completes from the request it was
// sending; the debug line reports the cache the restart lost.
func TestRealEngineRestartMidTurn(t *testing.T) {
	tree := llamaserver.Find(t)
	srv := llamaserver.Start(t, tree, llamaserver.Config{Model: llamaserver.ToolCallerModel(t, reader), Ctx: 6144, Args: llamaserver.ToolCallerArgs}) // -np as users leave it: 4 slots
	c, l := realClient(t, srv)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("[[done]]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ev := &statusEvents{down: make(chan struct{})}
	dbg := &logs{}
	a, err := agent.New(agent.Options{Workspace: emptyWorkspace{root: root}, Model: &killingModel{Client: c, srv: srv}, StateDir: t.TempDir(),
		Events: ev, Logf: dbg.logf, Settings: agent.Settings{Approve: agent.ApproveAll, Debug: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	done := make(chan agent.AskResult, 1)
	go func() { done <- a.Ask(context.Background(), agent.AskParams{Prompt: "go [[read]]"}) }()
	select {
	case <-ev.down:
	case res := <-done:
		t.Fatalf("the turn ended before it waited for the engine: %+v\n%s", res, l)
	case <-time.After(time.Minute): // hang guard
		t.Fatalf("no status says the engine is unreachable\n%s", l)
	}
	srv.Restart()
	var res agent.AskResult
	select {
	case res = <-done:
	case <-time.After(2 * time.Minute): // hang guard
		t.Fatalf("the turn did not go on once the engine was back\n%s", l)
	}
	if res.Status != agent.AskDone {
		t.Fatalf("the turn: %+v\n%s", res, l)
	}
	// The restarted server lost its cache: the debug line says so.
	if !strings.Contains(dbg.String(), "the engine's cache was lost") {
		t.Errorf("the debug lines do not report the lost cache:\n%s", dbg)
	}
	if n := strings.Count(l.String(), "engine unreachable, retrying"); n != 1 {
		t.Errorf("the client's log says it waits %d times, want once:\n%s", n, l)
	}
	ev.mu.Lock()
	last := ev.statuses[len(ev.statuses)-1]
	ev.mu.Unlock()
	if last.Level == agent.LevelError || strings.Contains(last.Text, agent.DownText) {
		t.Errorf("the last status: %+v", last)
	}
	a.Close()
}
