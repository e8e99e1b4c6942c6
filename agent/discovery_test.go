package agent_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/engine"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// hangGuard bounds every wait of these tests; reaching it means a hang.
const hangGuard = 20 * time.Second

// statusWatch records statuses and wakes waiters.
type statusWatch struct {
	collector
	cond *sync.Cond
}

func newStatusWatch() *statusWatch {
	w := &statusWatch{collector: collector{shrinkBefore: map[int]bool{}}}
	w.cond = sync.NewCond(&w.mu)
	return w
}

func (w *statusWatch) Status(s agent.Status) {
	w.collector.Status(s)
	w.cond.Broadcast()
}

// waitFor waits until a status satisfies ok, and returns it.
func (w *statusWatch) waitFor(t *testing.T, what string, ok func(agent.Status) bool) agent.Status {
	t.Helper()
	s, _ := w.waitFrom(t, 0, what, ok)
	return s
}

// waitFrom waits until a status published as the from-th or later (0-based)
// satisfies ok, and returns it with its index.
func (w *statusWatch) waitFrom(t *testing.T, from int, what string, ok func(agent.Status) bool) (agent.Status, int) {
	t.Helper()
	timer := time.AfterFunc(hangGuard, func() { w.cond.Broadcast() })
	defer timer.Stop()
	deadline := time.Now().Add(hangGuard)
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		for i := from; i < len(w.statuses); i++ {
			if s := w.statuses[i]; ok(s) {
				return s, i
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no status %s in %v: %+v", what, hangGuard, w.statuses)
		}
		w.cond.Wait()
	}
}

// freeAddr is a loopback address nothing listens on (yet).
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestResumeWhileTheEngineIsDown starts an agent on a workspace with a
// session while the engine is not up: the session is resumed at once, the
// status says the engine is unreachable, and when the engine comes up
// discovery adopts its window and the status turns back to normal without
// an ask. The next ask continues the old conversation.
func TestResumeWhileTheEngineIsDown(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	root := t.TempDir()
	files := goFiles(t, root, 6, 1500, 7000)
	state := t.TempDir()
	first := enginetest.New(enginetest.Options{Window: 16000, Script: answerResumes(readLoop(files))})
	r := resumer{t: t, srv: first, root: root, state: state}
	first.SetScript(enginetest.Sequence(enginetest.Call("read", `{"path":"`+files[0]+`"}`), enginetest.Text("read it")))
	if res := r.ask("read one file"); res.Status != agent.AskDone {
		t.Fatal(res)
	}
	before := first.Requests()
	lastSeen := before[len(before)-1].Request.Messages
	oldSession := strings.TrimSuffix(onlyLogName(t, state), ".jsonl")
	first.Close()

	addr := freeAddr(t)
	model, err := engine.New(engine.Config{BaseURL: "http://" + addr + "/v1", CacheDir: t.TempDir(), ModelsURL: "http://127.0.0.1:1/never", DownWait: -1})
	if err != nil {
		t.Fatal(err)
	}
	w := newStatusWatch()
	a, err := agent.New(agent.Options{Workspace: diskWorkspace{root: root}, Model: model, StateDir: state, Resume: true,
		Events: w, Settings: agent.Settings{Approve: agent.ApproveAll}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	agent.SetDiscoveryRetry(a, 20*time.Millisecond)
	if st := a.Status(); st.Session != oldSession || !a.HasTurns() {
		t.Fatalf("not resumed at start: session %q (want %q), turns %v", st.Session, oldSession, a.HasTurns())
	}
	down := w.waitFor(t, "at level error", func(s agent.Status) bool { return s.Level == agent.LevelError })
	if down.Session != oldSession || down.Window == nil || *down.Window != 16000 {
		t.Errorf("while the engine is down the status lost the session: %+v", down)
	}
	if res := a.Ask(context.Background(), agent.AskParams{Prompt: "RESUME too early"}); res.Status != agent.AskError || !strings.Contains(res.Message, "unreachable") {
		t.Errorf("an ask with the engine down: %+v", res)
	}

	second, err := enginetest.Listen(enginetest.Options{Window: 12000, Script: answerResumes(readLoop(files))}, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	up := w.waitFor(t, "back at level ok with the engine's window", func(s agent.Status) bool {
		return s.Level == agent.LevelOK && s.Window != nil && *s.Window == 12000
	})
	if up.Session != oldSession || up.WindowSource != llm.SourceEndpoint {
		t.Errorf("after discovery: %+v", up)
	}
	if res := a.Ask(context.Background(), agent.AskParams{Prompt: "RESUME now"}); res.Status != agent.AskDone || res.Session != oldSession {
		t.Fatalf("ask once the engine is up: %+v", res)
	}
	reqs := second.Requests()
	next := reqs[len(reqs)-1].Request.Messages
	if d := ctxwin.Diverge(lastSeen, next); !d.Append {
		t.Errorf("the resumed request diverges at message %d from what the model last saw", d.Index)
	}
	a.Close()
}

// onlyLogName is the file name of the one session log under state.
func onlyLogName(t *testing.T, state string) string {
	t.Helper()
	p := onlyLog(t, state)
	return p[strings.LastIndex(p, "/")+1:]
}

// TestEngineBackAfterATurnFoundItDown: the engine was up, goes down, and a
// turn fails as unreachable; when it comes back on its port, the status
// turns back to ok by itself, without another ask.
func TestEngineBackAfterATurnFoundItDown(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	addr := freeAddr(t)
	first, err := enginetest.Listen(enginetest.Options{Window: 16000, Script: enginetest.Sequence(enginetest.Text("hello"))}, addr)
	if err != nil {
		t.Fatal(err)
	}
	model, err := engine.New(engine.Config{BaseURL: "http://" + addr + "/v1", CacheDir: t.TempDir(), ModelsURL: "http://127.0.0.1:1/never", DownWait: -1})
	if err != nil {
		t.Fatal(err)
	}
	w := newStatusWatch()
	a, err := agent.New(agent.Options{Workspace: diskWorkspace{root: t.TempDir()}, Model: model, StateDir: t.TempDir(),
		Events: w, Settings: agent.Settings{Approve: agent.ApproveAll}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	agent.SetDiscoveryRetry(a, 20*time.Millisecond)
	if res := a.Ask(context.Background(), agent.AskParams{Prompt: "hi"}); res.Status != agent.AskDone {
		t.Fatalf("ask with the engine up: %+v", res)
	}
	first.Close()
	if res := a.Ask(context.Background(), agent.AskParams{Prompt: "still there?"}); res.Status != agent.AskError || !strings.Contains(res.Message, "unreachable") {
		t.Fatalf("ask with the engine down: %+v", res)
	}
	_, down := w.waitFrom(t, 0, "at level error", func(s agent.Status) bool { return s.Level == agent.LevelError })
	// While the engine stays down, discovery probes it again and again and
	// every status it publishes stays at level error: the cached discovery
	// does not make the engine look back.
	w.waitFrom(t, down+5, "five more while the engine is down", func(agent.Status) bool { return true })
	w.mu.Lock()
	for _, s := range w.statuses[down:] {
		if s.Level != agent.LevelError {
			t.Errorf("a status at level %s while the engine is down: %+v", s.Level, s)
		}
	}
	w.mu.Unlock()
	second, err := enginetest.Listen(enginetest.Options{Window: 16000, Script: enginetest.Sequence(enginetest.Text("back"))}, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	w.waitFrom(t, down+1, "back at level ok", func(s agent.Status) bool { return s.Level == agent.LevelOK && s.Window != nil })
	a.Close()
}
