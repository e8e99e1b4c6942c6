package agent_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// A long result's file lives with the session: it is under the state
// directory, a resumed session pages through it with read, and it is
// removed once its session's log is deleted.
func TestSavedResultsLiveWithTheSession(t *testing.T) {
	root := t.TempDir()
	srv := enginetest.New(enginetest.Options{Window: 32000, Script: enginetest.Sequence(
		enginetest.Call("bash", `{"command":"seq 1 3000"}`), enginetest.Text("done"))})
	t.Cleanup(srv.Close)
	r := resumer{t: t, srv: srv, root: root, state: t.TempDir()}
	if res := r.ask("print numbers"); res.Status != agent.AskDone {
		t.Fatalf("%+v", res)
	}
	saved, _ := filepath.Glob(filepath.Join(r.state, "sessions", "*", "*.results", "bash-*.txt"))
	if len(saved) != 1 {
		t.Fatalf("saved results under the state directory: %v", saved)
	}
	if b, _ := os.ReadFile(saved[0]); strings.Count(string(b), "\n") != 3000 {
		t.Fatalf("the saved file has %d lines", strings.Count(string(b), "\n"))
	}

	// A restart: the resumed session reads the file its history names.
	var mu sync.Mutex
	var seen string
	n := 0
	srv.SetScript(func(req *enginetest.Request) enginetest.Reply {
		mu.Lock()
		defer mu.Unlock()
		n++
		if n == 1 {
			return enginetest.Call("read", fmt.Sprintf(`{"path":%q,"start_line":2999,"end_line":3000}`, saved[0]))
		}
		if last := req.Messages[len(req.Messages)-1]; last.Role == ctxwin.RoleTool {
			seen = last.Content
		}
		return enginetest.Text("read it")
	})
	if res := r.ask("read the end"); res.Status != agent.AskDone {
		t.Fatalf("%+v", res)
	}
	mu.Lock()
	if !strings.Contains(seen, "2999") || !strings.Contains(seen, "3000") || strings.Contains(seen, "Error") {
		t.Errorf("the resumed session's read: %q", seen)
	}
	mu.Unlock()

	// The session is deleted: its results go when a session starts next.
	os.Remove(onlyLog(t, r.state))
	a := r.start()
	defer a.Close()
	if _, err := a.NewSession(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(saved[0])); !os.IsNotExist(err) {
		t.Errorf("the deleted session's results are still there: %v", err)
	}
}
