// Package scenario is the end-to-end scenario of the language server: the
// real server (in process or the binary) driven by lsptest against the fake
// engine.
package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/reika-lsp/reika-lsp/internal/goroot"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/lsp/lsptest"
)

// Run drives a reika-lsp server end to end as an editor does, against
// the fake engine srv (whose URL the server was given as its base URL), and
// checks what PROTOCOL.md promises: a turn that reads real files until the
// window sheds and folds, streamed transcript, progress and status, requests
// answered mid-turn, the code action, compact, save, both ways to cancel,
// a new session, and shutdown. root is the workspace; initialize must not
// have been sent yet.
func Run(t testing.TB, ctx context.Context, c *lsptest.Client, root string, srv *enginetest.Server) {
	t.Helper()
	files := copyGoFiles(t, root, 16)

	// A turn that reads every file, pausing on the fourth read until the
	// test has checked the server still answers. (A script runs under the
	// fake engine's lock: nothing may call srv while it waits.)
	reached, gate := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	reads := 0
	srv.SetScript(func(r *enginetest.Request) enginetest.Reply {
		if r.ToolChoice == "none" {
			return enginetest.Text("NOTE: the files read so far define small helpers.")
		}
		mu.Lock()
		n := reads
		reads++
		mu.Unlock()
		if n == 3 {
			once.Do(func() { close(reached) })
			<-gate
		}
		if n >= len(files) {
			return enginetest.Text("Done: read them all.")
		}
		return enginetest.Call("read", fmt.Sprintf(`{"path":%q}`, files[n]))
	})

	var init json.RawMessage
	err := c.Call(ctx, "initialize", map[string]any{
		"processId": os.Getpid(),
		"rootUri":   "file://" + root,
		"capabilities": map[string]any{
			"window":    map[string]any{"workDoneProgress": true, "showMessage": map[string]any{}},
			"workspace": map[string]any{"applyEdit": true, "configuration": true},
		},
		"initializationOptions": map[string]any{"reika": map[string]any{"approve": "all"}},
	}, &init)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if !strings.Contains(string(init), `"reika.ask"`) || !strings.Contains(string(init), "source.compactContext") {
		t.Errorf("initialize result lacks the commands or the code action kind: %s", init)
	}
	c.Notify(ctx, "initialized", map[string]any{})
	if _, err := c.WaitNote(ctx, "reika/status", nil); err != nil {
		t.Fatalf("no status after initialized: %v", err)
	}

	// The turn, on a client progress token.
	const askID = 101
	c.Send(askID, "workspace/executeCommand", map[string]any{
		"command":       "reika.ask",
		"arguments":     []any{map[string]any{"prompt": "Read the files and tell me what they define."}},
		"workDoneToken": "ask-1",
	})
	select {
	case <-reached:
	case <-ctx.Done():
		t.Fatal("the turn never reached its fourth read")
	}
	// Mid-turn, other requests are answered.
	var st struct {
		Busy bool
		Text string
	}
	if err := c.Command(ctx, "reika.status", nil, &st); err != nil || !st.Busy {
		t.Errorf("reika.status mid-turn: %+v, %v", st, err)
	}
	var actions []struct {
		Title, Kind string
		Command     struct{ Command string }
		Edit        any
	}
	if err := c.Call(ctx, "textDocument/codeAction", codeActionParams(root, files[0]), &actions); err != nil {
		t.Errorf("code action mid-turn: %v", err)
	}
	if answered(c, askID) {
		t.Fatal("the ask answered before the turn was let go")
	}
	close(gate)
	resp, err := c.WaitResponse(ctx, askID)
	if err != nil || resp.Err != nil {
		t.Fatalf("reika.ask: %v %v", err, resp.Err)
	}
	var ask struct{ Session, Status, Message string }
	json.Unmarshal(resp.Result, &ask)
	if ask.Status != "done" || ask.Session == "" {
		t.Fatalf("reika.ask result %s", resp.Result)
	}

	// The transcript streamed every kind of event, with notes before folds.
	kinds := map[string]int{}
	var order []string
	for _, m := range c.Notes("reika/transcript") {
		var ev struct {
			Session, Kind, Text string
			Turn, Round         int
			Delta               bool
		}
		json.Unmarshal(m.Params, &ev)
		if ev.Session != ask.Session || ev.Turn != 1 {
			t.Errorf("transcript event of another session or turn: %s", m.Params)
		}
		if !ev.Delta {
			kinds[ev.Kind]++
			order = append(order, ev.Kind)
		}
	}
	for _, k := range []string{"user", "tool_call", "tool_result", "shed", "fold", "note", "assistant"} {
		if kinds[k] == 0 {
			t.Errorf("no %s event in the transcript (got %v)", k, kinds)
		}
	}
	for i, k := range order {
		if k == "fold" && (i == 0 || !strings.Contains(strings.Join(order[max(0, i-3):i], ","), "note")) {
			t.Errorf("a fold event without the note before it: %v", order[max(0, i-4):i+1])
		}
	}
	// Progress: begin, a report per round, end.
	var prog []map[string]any
	for _, m := range c.Notes("$/progress") {
		var p struct {
			Token any
			Value map[string]any
		}
		json.Unmarshal(m.Params, &p)
		if p.Token == "ask-1" {
			prog = append(prog, p.Value)
		}
	}
	if len(prog) < 3 || prog[0]["kind"] != "begin" || prog[len(prog)-1]["kind"] != "end" {
		t.Fatalf("progress on the ask's token: %v", prog)
	}
	if prog[0]["title"] != "Reika" || prog[0]["cancellable"] != true {
		t.Errorf("progress begin %v", prog[0])
	}
	reports := 0
	for _, v := range prog[1 : len(prog)-1] {
		if v["kind"] != "report" || !regexp.MustCompile(`^round \d+ · .+ · ctx `).MatchString(fmt.Sprint(v["message"])) {
			t.Errorf("progress report %v", v)
		}
		reports++
	}
	if reports < len(files) {
		t.Errorf("%d progress reports for %d rounds", reports, len(files)+1)
	}
	// Status: the chip after every round, the warning as the window filled.
	warned := false
	for _, m := range c.Notes("reika/status") {
		var s struct {
			Text, Level, WindowSource string
			Window                    *int
		}
		json.Unmarshal(m.Params, &s)
		// Before the engine answers: the placeholder while the agent
		// starts, then the fixed prefix's size with no window.
		starting := s.Text == "ctx –" || s.Window == nil && s.WindowSource == "none" && regexp.MustCompile(`^ctx [0-9.]+k?$`).MatchString(s.Text)
		if !regexp.MustCompile(`^ctx [0-9.]+k?/16k \(\d+% of 1[23]k\)$`).MatchString(s.Text) && !starting {
			t.Errorf("status text %q", s.Text)
		}
		warned = warned || s.Level == "warning"
	}
	if !warned {
		t.Error("no warning status while the window filled")
	}
	folds := 0
	for _, m := range c.Notes("window/showMessage") {
		var sm struct {
			Type    int
			Message string
		}
		json.Unmarshal(m.Params, &sm)
		if regexp.MustCompile(`^Folded \d+ rounds? into a [0-9.]+k?-token recap$`).MatchString(sm.Message) {
			folds++
			if sm.Type != 3 {
				t.Errorf("fold message of type %d, want Info (3)", sm.Type)
			}
		}
	}
	if folds != kinds["fold"] {
		t.Errorf("%d fold messages for %d folds", folds, kinds["fold"])
	}

	// The code action once the session has a turn, and compact.
	actions = nil
	c.Call(ctx, "textDocument/codeAction", codeActionParams(root, files[0]), &actions)
	found := false
	for _, a := range actions {
		if a.Title == "Compact context" && a.Kind == "source.compactContext" && a.Command.Command == "reika.compact" && a.Edit == nil {
			found = true
		}
	}
	if !found {
		t.Errorf("no Compact context action: %+v", actions)
	}
	var compact struct {
		Folded      bool
		RecapTokens int
		Message     string
	}
	if err := c.Command(ctx, "reika.compact", []any{}, &compact); err != nil {
		t.Fatalf("reika.compact: %v", err)
	}
	if compact.Folded != (compact.RecapTokens > 0) || compact.Message == "" ||
		(!compact.Folded && compact.Message != "Nothing to fold") {
		t.Errorf("reika.compact: %+v", compact)
	}

	// Save: the whole conversation, unshed.
	var saved struct{ Path string }
	if err := c.Command(ctx, "reika.save", []any{map[string]any{"path": "transcript.md"}}, &saved); err != nil {
		t.Fatalf("reika.save: %v", err)
	}
	md, err := os.ReadFile(saved.Path)
	if err != nil || !strings.Contains(string(md), "## Turn 1") {
		t.Fatalf("saved transcript at %q: %v", saved.Path, err)
	}
	for _, f := range files {
		data, _ := os.ReadFile(filepath.Join(root, f))
		lines := strings.Split(string(data), "\n")
		if mid := lines[len(lines)/2]; !strings.Contains(string(md), mid) {
			t.Errorf("the saved transcript lacks line %q of %s", mid, f)
		}
	}

	// Cancelling: $/cancelRequest with a numeric id, then reika.cancel on a
	// turn asked with a string id. The engine holds its answer back until
	// the client goes away.
	srv.SetScript(func(r *enginetest.Request) enginetest.Reply {
		return enginetest.Reply{Content: "too late", Fault: enginetest.Fault{FirstByteDelay: time.Hour}}
	})
	before := len(srv.Calls())
	c.Send(102, "workspace/executeCommand", map[string]any{"command": "reika.ask", "arguments": []any{map[string]any{"prompt": "wait"}}})
	waitCalls(t, ctx, srv, before)
	c.Notify(ctx, "$/cancelRequest", map[string]any{"id": 102})
	if r, err := c.WaitResponse(ctx, 102); err != nil || !cancelled(r) {
		t.Errorf("ask cancelled by $/cancelRequest: %+v %v", r, err)
	}
	waitIdle(t, ctx, c)
	before = len(srv.Calls())
	c.Send("ask-str", "workspace/executeCommand", map[string]any{"command": "reika.ask", "arguments": []any{map[string]any{"prompt": "wait again"}}})
	waitCalls(t, ctx, srv, before)
	var cres struct{ Cancelled bool }
	if err := c.Command(ctx, "reika.cancel", []any{}, &cres); err != nil || !cres.Cancelled {
		t.Errorf("reika.cancel: %+v %v", cres, err)
	}
	if r, err := c.WaitResponse(ctx, "ask-str"); err != nil || !cancelled(r) {
		t.Errorf("ask cancelled by reika.cancel: %+v %v", r, err)
	}
	waitIdle(t, ctx, c)

	// A new session.
	var ns struct{ Session string }
	if err := c.Command(ctx, "reika.newSession", []any{}, &ns); err != nil || ns.Session == "" || ns.Session == ask.Session {
		t.Errorf("reika.newSession: %+v %v", ns, err)
	}
	if err := c.Call(ctx, "shutdown", nil, nil); err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

func answered(c *lsptest.Client, id int64) bool {
	for _, r := range c.Responses() {
		if r.ID == jsonrpc2.NewNumberID(id) {
			return true
		}
	}
	return false
}

// cancelled reports whether an ask answered as cancelled: the result
// {status: cancelled}, or the RequestCancelled error.
func cancelled(r lsptest.Response) bool {
	if r.Err != nil {
		return r.Err.Code == -32800
	}
	var res struct{ Status string }
	json.Unmarshal(r.Result, &res)
	return res.Status == "cancelled"
}

// waitCalls waits until the engine received a request after the first n.
func waitCalls(t testing.TB, ctx context.Context, srv *enginetest.Server, n int) {
	t.Helper()
	for len(srv.Calls()) <= n {
		select {
		case <-ctx.Done():
			t.Fatal("the engine got no request")
		default:
			runtime.Gosched()
		}
	}
}

// waitIdle waits until the last status the server sent is not busy (the
// turn was busy when the engine got its request, so a later status ends it).
func waitIdle(t testing.TB, ctx context.Context, c *lsptest.Client) {
	t.Helper()
	err := c.Wait(ctx, func(notes, _ []lsptest.Message) bool {
		for i := len(notes) - 1; i >= 0; i-- {
			if notes[i].Method == "reika/status" {
				var s struct{ Busy bool }
				json.Unmarshal(notes[i].Params, &s)
				return !s.Busy
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("the server stayed busy after a cancel: %v", err)
	}
}

func codeActionParams(root, file string) map[string]any {
	return map[string]any{
		"textDocument": map[string]any{"uri": "file://" + filepath.Join(root, file)},
		"range":        map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 0, "character": 0}},
		"context":      map[string]any{"diagnostics": []any{}},
	}
}

// copyGoFiles copies n source files of the Go distribution (2–7 KB each)
// into root and returns their relative paths.
func copyGoFiles(t testing.TB, root string, n int) []string {
	t.Helper()
	var out []string
	for _, pkg := range []string{"strings", "bytes", "bufio", "sort", "strconv", "unicode/utf8", "path", "container/list", "io", "errors", "flag", "html", "log", "mime"} {
		dir := filepath.Join(goroot.Dir(), "src", filepath.FromSlash(pkg))
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			info, err := e.Info()
			if err != nil || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") || info.Size() < 2000 || info.Size() > 7000 {
				continue
			}
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			rel := filepath.ToSlash(filepath.Join("src", pkg, e.Name()))
			os.MkdirAll(filepath.Join(root, filepath.Dir(rel)), 0o755)
			if err := os.WriteFile(filepath.Join(root, rel), data, 0o644); err != nil {
				t.Fatal(err)
			}
			if out = append(out, rel); len(out) == n {
				return out
			}
		}
	}
	t.Fatalf("only %d Go files of 2-7 KB in the distribution", len(out))
	return nil
}
