// Package scenario is the end-to-end scenario of the language server: the
// real server (in process or the binary) driven by lsptest against the fake
// engine.
package scenario

import (
	"context"
	"encoding/json"
	"fmt"
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
	"github.com/reika-lsp/reika-lsp/internal/goroot"
	"github.com/reika-lsp/reika-lsp/lsp/lsptest"
)

// Run drives a reika-lsp server end to end as an editor does, against
// the fake engine srv (whose URL the server was given as its base URL), and
// checks what docs/protocol.md promises: a turn that reads real files until the
// window sheds and folds, streamed transcript, progress and status, requests
// answered mid-turn, the code action, compact, save, both ways to cancel,
// a new session, and shutdown. root is the workspace; initialize must not
// have been sent yet.
func Run(t testing.TB, ctx context.Context, c *lsptest.Client, root string, srv *enginetest.Server) {
	t.Helper()
	s := &run{t: t, ctx: ctx, c: c, root: root, srv: srv, files: copyGoFiles(t, root, 16)}
	reached, gate := s.scriptReads()
	s.initialize()
	s.turn(reached, gate)
	s.checkTranscript()
	s.checkProgress()
	s.checkStatus()
	s.checkFoldMessages()
	s.compact()
	s.save()
	s.cancelBothWays()
	s.newSession()
	if err := c.Call(ctx, "shutdown", nil, nil); err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

// run is one run of the scenario: the parties, the workspace's files, and
// what the first turn left for the later checks.
type run struct {
	t     testing.TB
	ctx   context.Context
	c     *lsptest.Client
	root  string
	srv   *enginetest.Server
	files []string // the files the turn reads, relative to root

	session string         // the first turn's session, once it answered
	kinds   map[string]int // the transcript's whole events by kind, once checked
}

// askID is the JSON-RPC id of the first turn's reika.ask.
const askID = 101

// scriptReads scripts the engine for the first turn: a read of every file,
// then a text answer, and a note whenever tool calls are forbidden. The
// fourth read closes reached and waits until gate is closed, so the test
// can check the server still answers mid-turn. (A script runs under the
// fake engine's lock: nothing may call srv while it waits.)
func (s *run) scriptReads() (reached, gate chan struct{}) {
	reached, gate = make(chan struct{}), make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	reads := 0
	s.srv.SetScript(func(r *enginetest.Request) enginetest.Reply {
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
		if n >= len(s.files) {
			return enginetest.Text("Done: read them all.")
		}
		return enginetest.Call("read", fmt.Sprintf(`{"path":%q}`, s.files[n]))
	})
	return reached, gate
}

// initialize opens the session as an editor does, approving every tool,
// and checks that the server advertises its commands and code action kind
// and sends a status once initialized.
func (s *run) initialize() {
	s.t.Helper()
	var init json.RawMessage
	err := s.c.Call(s.ctx, "initialize", map[string]any{
		"processId": os.Getpid(),
		"rootUri":   "file://" + s.root,
		"capabilities": map[string]any{
			"window":    map[string]any{"workDoneProgress": true, "showMessage": map[string]any{}},
			"workspace": map[string]any{"applyEdit": true, "configuration": true},
		},
		"initializationOptions": map[string]any{"reika": map[string]any{"approve": "all"}},
	}, &init)
	if err != nil {
		s.t.Fatalf("initialize: %v", err)
	}
	if !strings.Contains(string(init), `"reika.ask"`) || !strings.Contains(string(init), "source.compactContext") {
		s.t.Errorf("initialize result lacks the commands or the code action kind: %s", init)
	}
	s.c.Notify(s.ctx, "initialized", map[string]any{})
	if _, err := s.c.WaitNote(s.ctx, "reika/status", nil); err != nil {
		s.t.Fatalf("no status after initialized: %v", err)
	}
}

// turn asks for the first turn on a client progress token; once the turn
// has reached its fourth read it checks that reika.status (busy) and the
// code action are answered while the ask is not, then lets the turn go and
// waits for it to end done. It records the turn's session.
func (s *run) turn(reached, gate chan struct{}) {
	s.t.Helper()
	s.c.Send(askID, "workspace/executeCommand", map[string]any{
		"command":       "reika.ask",
		"arguments":     []any{map[string]any{"prompt": "Read the files and tell me what they define."}},
		"workDoneToken": "ask-1",
	})
	select {
	case <-reached:
	case <-s.ctx.Done():
		s.t.Fatal("the turn never reached its fourth read")
	}
	// Mid-turn, other requests are answered.
	var st struct {
		Busy bool
		Text string
	}
	if err := s.c.Command(s.ctx, "reika.status", nil, &st); err != nil || !st.Busy {
		s.t.Errorf("reika.status mid-turn: %+v, %v", st, err)
	}
	var actions []codeAction
	if err := s.c.Call(s.ctx, "textDocument/codeAction", codeActionParams(s.root, s.files[0]), &actions); err != nil {
		s.t.Errorf("code action mid-turn: %v", err)
	}
	if answered(s.c, askID) {
		s.t.Fatal("the ask answered before the turn was let go")
	}
	close(gate)
	resp, err := s.c.WaitResponse(s.ctx, askID)
	if err != nil || resp.Err != nil {
		s.t.Fatalf("reika.ask: %v %v", err, resp.Err)
	}
	var ask struct{ Session, Status, Message string }
	json.Unmarshal(resp.Result, &ask)
	if ask.Status != "done" || ask.Session == "" {
		s.t.Fatalf("reika.ask result %s", resp.Result)
	}
	s.session = ask.Session
}

// codeAction is the part of a code action the scenario checks.
type codeAction struct {
	Title, Kind string
	Command     struct{ Command string }
	Edit        any
}

// checkTranscript checks that the turn's transcript streamed every kind of
// event, all of its session and turn, with a note shortly before each
// fold, and records the count of whole events by kind.
func (s *run) checkTranscript() {
	s.t.Helper()
	s.kinds = map[string]int{}
	var order []string
	for _, m := range s.c.Notes("reika/transcript") {
		var ev struct {
			Session, Kind, Text string
			Turn, Round         int
			Delta               bool
		}
		json.Unmarshal(m.Params, &ev)
		if ev.Session != s.session || ev.Turn != 1 {
			s.t.Errorf("transcript event of another session or turn: %s", m.Params)
		}
		if !ev.Delta {
			s.kinds[ev.Kind]++
			order = append(order, ev.Kind)
		}
	}
	for _, k := range []string{"user", "tool_call", "tool_result", "shed", "fold", "note", "assistant"} {
		if s.kinds[k] == 0 {
			s.t.Errorf("no %s event in the transcript (got %v)", k, s.kinds)
		}
	}
	for i, k := range order {
		if k == "fold" && (i == 0 || !strings.Contains(strings.Join(order[max(0, i-3):i], ","), "note")) {
			s.t.Errorf("a fold event without the note before it: %v", order[max(0, i-4):i+1])
		}
	}
}

// checkProgress checks the progress on the ask's token: a cancellable
// "Reika" begin, a report per round, and an end.
func (s *run) checkProgress() {
	s.t.Helper()
	var prog []map[string]any
	for _, m := range s.c.Notes("$/progress") {
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
		s.t.Fatalf("progress on the ask's token: %v", prog)
	}
	if prog[0]["title"] != "Reika" || prog[0]["cancellable"] != true {
		s.t.Errorf("progress begin %v", prog[0])
	}
	reports := 0
	for _, v := range prog[1 : len(prog)-1] {
		if v["kind"] != "report" || !regexp.MustCompile(`^round \d+ · .+ · ctx `).MatchString(fmt.Sprint(v["message"])) {
			s.t.Errorf("progress report %v", v)
		}
		reports++
	}
	if reports < len(s.files) {
		s.t.Errorf("%d progress reports for %d rounds", reports, len(s.files)+1)
	}
}

// checkStatus checks every status the server sent: the chip's text after
// every round, and a warning as the window filled.
func (s *run) checkStatus() {
	s.t.Helper()
	warned := false
	for _, m := range s.c.Notes("reika/status") {
		var st struct {
			Text, Level, WindowSource string
			Window                    *int
		}
		json.Unmarshal(m.Params, &st)
		// Before the engine answers: the placeholder while the agent
		// starts, then the fixed prefix's size with no window.
		starting := st.Text == "ctx –" || st.Window == nil && st.WindowSource == "none" && regexp.MustCompile(`^ctx [0-9.]+k?$`).MatchString(st.Text)
		if !regexp.MustCompile(`^ctx [0-9.]+k?/16k \(\d+% of 1[23]k\)$`).MatchString(st.Text) && !starting {
			s.t.Errorf("status text %q", st.Text)
		}
		warned = warned || st.Level == "warning"
	}
	if !warned {
		s.t.Error("no warning status while the window filled")
	}
}

// checkFoldMessages checks that every fold of the transcript was told to
// the user as an Info message.
func (s *run) checkFoldMessages() {
	s.t.Helper()
	folds := 0
	for _, m := range s.c.Notes("window/showMessage") {
		var sm struct {
			Type    int
			Message string
		}
		json.Unmarshal(m.Params, &sm)
		if regexp.MustCompile(`^Folded \d+ rounds? into a [0-9.]+k?-token recap$`).MatchString(sm.Message) {
			folds++
			if sm.Type != 3 {
				s.t.Errorf("fold message of type %d, want Info (3)", sm.Type)
			}
		}
	}
	if folds != s.kinds["fold"] {
		s.t.Errorf("%d fold messages for %d folds", folds, s.kinds["fold"])
	}
}

// compact checks the Compact context code action, offered once the session
// has a turn, and reika.compact's answer.
func (s *run) compact() {
	s.t.Helper()
	var actions []codeAction
	s.c.Call(s.ctx, "textDocument/codeAction", codeActionParams(s.root, s.files[0]), &actions)
	found := false
	for _, a := range actions {
		if a.Title == "Compact context" && a.Kind == "source.compactContext" && a.Command.Command == "reika.compact" && a.Edit == nil {
			found = true
		}
	}
	if !found {
		s.t.Errorf("no Compact context action: %+v", actions)
	}
	var compact struct {
		Folded      bool
		RecapTokens int
		Message     string
	}
	if err := s.c.Command(s.ctx, "reika.compact", []any{}, &compact); err != nil {
		s.t.Fatalf("reika.compact: %v", err)
	}
	if compact.Folded != (compact.RecapTokens > 0) || compact.Message == "" ||
		(!compact.Folded && compact.Message != "Nothing to fold") {
		s.t.Errorf("reika.compact: %+v", compact)
	}
}

// save checks that reika.save writes the whole conversation, unshed: the
// middle line of every file read is in it.
func (s *run) save() {
	s.t.Helper()
	var saved struct{ Path string }
	if err := s.c.Command(s.ctx, "reika.save", []any{map[string]any{"path": "transcript.md"}}, &saved); err != nil {
		s.t.Fatalf("reika.save: %v", err)
	}
	md, err := os.ReadFile(saved.Path)
	if err != nil || !strings.Contains(string(md), "## Turn 1") {
		s.t.Fatalf("saved transcript at %q: %v", saved.Path, err)
	}
	for _, f := range s.files {
		data, _ := os.ReadFile(filepath.Join(s.root, f))
		lines := strings.Split(string(data), "\n")
		if mid := lines[len(lines)/2]; !strings.Contains(string(md), mid) {
			s.t.Errorf("the saved transcript lacks line %q of %s", mid, f)
		}
	}
}

// cancelBothWays cancels a turn with $/cancelRequest on a numeric id, then
// one asked with a string id with reika.cancel, and checks each ask
// answers as cancelled and the server goes idle. The engine holds its
// answer back until the client goes away.
func (s *run) cancelBothWays() {
	s.t.Helper()
	s.srv.SetScript(func(r *enginetest.Request) enginetest.Reply {
		return enginetest.Reply{Content: "too late", Fault: enginetest.Fault{FirstByteDelay: time.Hour}}
	})
	before := len(s.srv.Calls())
	s.c.Send(102, "workspace/executeCommand", map[string]any{"command": "reika.ask", "arguments": []any{map[string]any{"prompt": "wait"}}})
	waitCalls(s.t, s.ctx, s.srv, before)
	s.c.Notify(s.ctx, "$/cancelRequest", map[string]any{"id": 102})
	if r, err := s.c.WaitResponse(s.ctx, 102); err != nil || !cancelled(r) {
		s.t.Errorf("ask cancelled by $/cancelRequest: %+v %v", r, err)
	}
	waitIdle(s.t, s.ctx, s.c)
	before = len(s.srv.Calls())
	s.c.Send("ask-str", "workspace/executeCommand", map[string]any{"command": "reika.ask", "arguments": []any{map[string]any{"prompt": "wait again"}}})
	waitCalls(s.t, s.ctx, s.srv, before)
	var cres struct{ Cancelled bool }
	if err := s.c.Command(s.ctx, "reika.cancel", []any{}, &cres); err != nil || !cres.Cancelled {
		s.t.Errorf("reika.cancel: %+v %v", cres, err)
	}
	if r, err := s.c.WaitResponse(s.ctx, "ask-str"); err != nil || !cancelled(r) {
		s.t.Errorf("ask cancelled by reika.cancel: %+v %v", r, err)
	}
	waitIdle(s.t, s.ctx, s.c)
}

// newSession checks that reika.newSession starts a session other than the
// first turn's.
func (s *run) newSession() {
	s.t.Helper()
	var ns struct{ Session string }
	if err := s.c.Command(s.ctx, "reika.newSession", []any{}, &ns); err != nil || ns.Session == "" || ns.Session == s.session {
		s.t.Errorf("reika.newSession: %+v %v", ns, err)
	}
}

// answered reports whether the server has answered the request of the
// numeric id.
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
