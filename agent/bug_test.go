package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/engine"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// TestCtxwinPanicFailsTheTurnWithAReport: a panic inside ctxwin (in a
// shed, through the outliner it calls) fails that turn with one line
// naming a report that holds the stack, and the next ask runs.
func TestCtxwinPanicFailsTheTurnWithAReport(t *testing.T) {
	root := t.TempDir()
	files := goFiles(t, root, 12, 1500, 7000)
	var mu sync.Mutex
	read := 0
	srv := enginetest.New(enginetest.Options{Shape: enginetest.ShapeLlamaCpp, Window: 8000, Script: func(r *enginetest.Request) enginetest.Reply {
		mu.Lock()
		defer mu.Unlock()
		last := r.Messages[len(r.Messages)-1]
		switch {
		case r.ToolChoice == "none":
			return enginetest.Text("NOTE: reading the files one by one")
		case last.Role == "user" && last.Content != "read the files", read >= len(files):
			return enginetest.Text("Done.")
		}
		args, _ := json.Marshal(map[string]string{"path": files[read]})
		read++
		return enginetest.Call("read", string(args))
	}})
	defer srv.Close()
	model, err := engine.New(engine.Config{BaseURL: srv.URL(), CacheDir: t.TempDir(), ModelsURL: "http://127.0.0.1:1/never"})
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	col := &collector{shrinkBefore: map[int]bool{}}
	a, err := agent.New(agent.Options{Workspace: diskWorkspace{root: root}, Model: model, Events: col,
		Settings: agent.Settings{Approve: agent.ApproveAll}, StateDir: state, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()

	if res := a.Ask(context.Background(), agent.AskParams{Prompt: "hello"}); res.Status != agent.AskDone {
		t.Fatalf("first ask = %+v", res)
	}
	// ctxwin calls the outliner when it sheds a read: the first call
	// panics, inside ctxwin.
	fired := &atomic.Bool{}
	agent.SetOutliner(a, func(*ctxwin.Result, int) string {
		if fired.CompareAndSwap(false, true) {
			panic("injected panic in ctxwin")
		}
		return ""
	})
	res := a.Ask(context.Background(), agent.AskParams{Prompt: "read the files"})
	if !fired.Load() {
		t.Fatalf("ctxwin never read a file (no shed read?): the turn ended %+v", res)
	}
	if res.Status != agent.AskError || !strings.Contains(res.Message, "injected panic in ctxwin") || !strings.Contains(res.Message, "; report: ") {
		t.Fatalf("turn with a panic in ctxwin = %+v", res)
	}
	var lines []string
	for _, n := range col.notices {
		if strings.Contains(n.Text, "injected panic") {
			lines = append(lines, n.Text)
			if n.Level != agent.LevelError || strings.Contains(n.Text, "\n") {
				t.Errorf("the bug's notice is not one error line: %+v", n)
			}
		}
	}
	path := strings.TrimSpace(res.Message[strings.LastIndex(res.Message, "; report: ")+len("; report: "):])
	if len(lines) != 1 || !strings.Contains(lines[0], path) {
		t.Errorf("notices of the bug = %q, want one naming %s", lines, path)
	}
	if dir := filepath.Join(state, "reports"); filepath.Dir(path) != dir {
		t.Errorf("report %s is not in %s", path, dir)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if text := string(b); !strings.Contains(text, "panic:   injected panic in ctxwin") || !strings.Contains(text, "reika-lsp/ctxwin.") {
		t.Errorf("the report lacks the panic or ctxwin's frames:\n%s", text)
	}

	if res := a.Ask(context.Background(), agent.AskParams{Prompt: "again"}); res.Status != agent.AskDone {
		t.Errorf("ask after the panic = %+v", res)
	}
}
