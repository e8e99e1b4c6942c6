package lsp

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/engine"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/lsp/lsptest"
)

// sessionsAgent is a real agent over the fake engine, its state in state;
// a prompt with "slow" in it holds its turn until release is closed, and
// says so on started.
func sessionsAgent(t *testing.T, state string, started chan<- struct{}, release <-chan struct{}) func(agent.Options) (agent.Service, error) {
	script := func(r *enginetest.Request) enginetest.Reply {
		last := r.Messages[len(r.Messages)-1].Content
		if strings.Contains(last, "slow") {
			started <- struct{}{}
			<-release
		}
		return enginetest.Text("answer to " + last)
	}
	return func(opts agent.Options) (agent.Service, error) {
		srv := enginetest.New(enginetest.Options{Window: 16000, Script: script})
		t.Cleanup(srv.Close)
		model, err := engine.New(engine.Config{BaseURL: srv.URL(), CacheDir: t.TempDir()})
		if err != nil {
			return nil, err
		}
		opts.Model, opts.StateDir, opts.Resume = model, state, true
		return agent.New(opts)
	}
}

type sessionsResult struct {
	Sessions []agent.SessionInfo `json:"sessions"`
}

func (h *harness) sessions(args map[string]any, result any) error {
	return h.command(CmdSessions, []any{args}, result)
}

func (h *harness) ask(prompt string) agent.AskResult {
	h.t.Helper()
	var res agent.AskResult
	h.mustCommand(CmdAsk, []any{map[string]any{"prompt": prompt}}, &res)
	if res.Status != agent.AskDone {
		h.t.Fatalf("ask %q: %+v", prompt, res)
	}
	return res
}

// Each action of reika.sessions through the server, on a real agent:
// list, open, rename, resume (the next ask continues that session, and a
// status follows), delete (the current one: the next ask starts afresh).
func TestSessionsCommand(t *testing.T) {
	state := t.TempDir()
	h := start(t, harnessOptions{newAgent: sessionsAgent(t, state, nil, nil)})
	h.initialize(nil, nil)
	first := h.ask("first task\nmore of it").Session
	var ns struct{ Session string }
	h.mustCommand(CmdNewSession, nil, &ns)
	second := h.ask("second task").Session

	var list sessionsResult
	h.mustCommand(CmdSessions, []any{map[string]any{"action": "list"}}, &list)
	if len(list.Sessions) != 2 || list.Sessions[0].ID != second || list.Sessions[1].ID != first ||
		!list.Sessions[0].Current || list.Sessions[1].Current || list.Sessions[1].Title != "first task" || list.Sessions[1].Turns != 1 {
		t.Fatalf("list: %+v", list)
	}

	var page agent.TranscriptPage
	h.mustCommand(CmdSessions, []any{map[string]any{"action": "open", "id": first}}, &page)
	if page.Session != first || len(page.Events) < 2 || page.Events[0].Text != "first task\nmore of it" || page.Events[1].Text != "answer to first task\nmore of it" {
		t.Errorf("open: %+v", page)
	}

	var empty map[string]any
	h.mustCommand(CmdSessions, []any{map[string]any{"action": "rename", "id": first, "title": "Zebras"}}, &empty)
	if empty == nil || len(empty) != 0 {
		t.Errorf("rename answered %v, want {}", empty)
	}

	var resumed struct{ Session string }
	h.mustCommand(CmdSessions, []any{map[string]any{"action": "resume", "id": first}}, &resumed)
	if resumed.Session != first {
		t.Errorf("resume answered %+v", resumed)
	}
	h.waitNote(MethodStatus, func(m lsptest.Message) bool { return decode[agent.Status](t, m.Params).Session == first })
	if got := h.ask("and then?").Session; got != first {
		t.Errorf("the ask after resume ran in %q, want %q", got, first)
	}
	h.mustCommand(CmdSessions, []any{map[string]any{"action": "list"}}, &list)
	if s := list.Sessions[0]; s.ID != first || !s.Current || s.Title != "Zebras" || s.Turns != 2 {
		t.Errorf("list after resume and ask: %+v", list)
	}

	h.mustCommand(CmdSessions, []any{map[string]any{"action": "delete", "id": first}}, &empty)
	h.mustCommand(CmdSessions, []any{map[string]any{"action": "list"}}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].ID != second || list.Sessions[0].Current {
		t.Errorf("list after deleting the current session: %+v", list)
	}
	if left, _ := filepath.Glob(filepath.Join(state, "sessions", "*", first+"*")); len(left) != 0 {
		t.Errorf("left of the deleted session: %v", left)
	}
	if got := h.ask("fresh").Session; got == first || got == second {
		t.Errorf("the ask after deleting the current session ran in %q", got)
	}
	h.shutdownExit(true)
}

// Bad arguments are invalid params; an unknown id fails naming it; a
// resume, or the delete of the running session, is refused while a turn
// runs, and a delete of another session is not.
func TestSessionsCommandErrors(t *testing.T) {
	state := t.TempDir()
	started, release := make(chan struct{}, 1), make(chan struct{})
	h := start(t, harnessOptions{newAgent: sessionsAgent(t, state, started, release)})
	h.initialize(nil, nil)
	first := h.ask("one").Session
	h.mustCommand(CmdNewSession, nil, nil)
	second := h.ask("two").Session
	h.mustCommand(CmdNewSession, nil, nil)
	for _, args := range []any{"list", map[string]any{}, map[string]any{"action": "drop", "id": first},
		map[string]any{"action": "open"}, map[string]any{"action": "resume", "id": ""},
		map[string]any{"action": "rename", "id": first}, map[string]any{"action": "open", "id": first, "maxChars": -1}} {
		if err := h.command(CmdSessions, []any{args}, nil); rpcCode(err) != -32602 {
			t.Errorf("%v: %v, want invalid params", args, err)
		}
	}
	for _, action := range []string{"open", "resume", "rename", "delete"} {
		err := h.sessions(map[string]any{"action": action, "id": "no-such-session", "title": "x"}, nil)
		if rpcCode(err) != -32803 || !strings.Contains(err.Error(), `"no-such-session"`) {
			t.Errorf("%s of an unknown id: %v", action, err)
		}
	}

	asked := h.c.Go(h.ctx, "workspace/executeCommand",
		map[string]any{"command": CmdAsk, "arguments": []any{map[string]any{"prompt": "slow"}}}, nil)
	<-started
	current := h.currentSession()
	if err := h.sessions(map[string]any{"action": "resume", "id": first}, nil); rpcCode(err) != -32803 || !strings.Contains(err.Error(), "a turn is already running") {
		t.Errorf("resume during a turn: %v", err)
	}
	if err := h.sessions(map[string]any{"action": "delete", "id": current}, nil); rpcCode(err) != -32803 || !strings.Contains(err.Error(), "a turn is already running") {
		t.Errorf("delete of the running session: %v", err)
	}
	if err := h.sessions(map[string]any{"action": "delete", "id": second}, nil); err != nil {
		t.Errorf("delete of another session during a turn: %v", err)
	}
	close(release)
	if err := <-asked; err != nil {
		t.Fatal(err)
	}
	var list sessionsResult
	h.mustCommand(CmdSessions, []any{map[string]any{"action": "list"}}, &list)
	if len(list.Sessions) != 2 || !list.Sessions[0].Current || list.Sessions[0].ID != current || list.Sessions[1].ID != first {
		t.Errorf("list after the refusals: %+v", list)
	}
	h.shutdownExit(true)
}

func (h *harness) currentSession() string {
	h.t.Helper()
	var st agent.Status
	h.mustCommand(CmdStatus, nil, &st)
	return st.Session
}

// The scripted agent (the server the editors' tests run) keeps a history
// as the real one does.
func TestSessionsCommandScripted(t *testing.T) {
	h := start(t, harnessOptions{})
	h.initialized()
	h.mustCommand(CmdAsk, []any{map[string]any{"prompt": "hello there"}}, nil)
	h.mustCommand(CmdNewSession, nil, nil)
	var list sessionsResult
	h.mustCommand(CmdSessions, []any{map[string]any{"action": "list"}}, &list)
	if len(list.Sessions) != 2 || list.Sessions[0].ID != "s2" || !list.Sessions[0].Current || list.Sessions[1].Title != "hello there" {
		t.Fatalf("list: %+v", list)
	}
	h.mustCommand(CmdSessions, []any{map[string]any{"action": "resume", "id": "s1"}}, nil)
	if got := h.currentSession(); got != "s1" {
		t.Errorf("after resume the session is %q", got)
	}
	h.mustCommand(CmdSessions, []any{map[string]any{"action": "delete", "id": "s2"}}, nil)
	if err := h.sessions(map[string]any{"action": "open", "id": "s2"}, nil); rpcCode(err) != -32803 {
		t.Errorf("open of a deleted session: %v", err)
	}
}
