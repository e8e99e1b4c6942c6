package lsp

// One test for each sharp edge of go.lsp.dev v1.0.1 that docs/design.md §7
// lists, plus the ones found while building this package. Each would fail
// with the library's defaults.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/approval"
	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/lsp/lsptest"
)

// §7: "an unknown client notification closes the connection unless the
// handler returns nil for it".
func TestSharpEdgeUnknownNotificationKeepsTheConnection(t *testing.T) {
	h := start(t, harnessOptions{})
	h.initialized()
	for _, method := range []string{"reika/bar", "$/setTrace", "custom/thing", "textDocument/didSave", "$/cancelRequest"} {
		if err := h.c.Notify(h.ctx, method, map[string]any{"x": 1}); err != nil {
			t.Fatalf("notify %s: %v", method, err)
		}
	}
	var st agent.Status
	h.mustCommand(CmdStatus, nil, &st)
	if st.Model != "fake" {
		t.Errorf("status after unknown notifications = %+v", st)
	}
}

// §7: "the stock server runs every message concurrently, so
// didOpen/didChange can apply out of order".
func TestSharpEdgeDidChangeAppliesInOrder(t *testing.T) {
	h := start(t, harnessOptions{})
	f := h.initialized()
	path := h.root + "/order.txt"
	docURI := "file://" + path
	h.c.Notify(h.ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": docURI, "languageId": "plaintext", "version": 0, "text": ""}})
	want := ""
	for i := 1; i <= 300; i++ {
		// Each change appends at the end of the text as it is after the
		// previous one: applied out of order, the text comes out wrong.
		line, char := positionAt(want, len(want))
		piece := fmt.Sprintf("%d😀\n", i)
		h.c.Notify(h.ctx, "textDocument/didChange", map[string]any{
			"textDocument": map[string]any{"uri": docURI, "version": i},
			"contentChanges": []any{map[string]any{
				"range": map[string]any{"start": map[string]any{"line": line, "character": char}, "end": map[string]any{"line": line, "character": char}},
				"text":  piece,
			}},
		})
		want += piece
	}
	// A request after the notifications is answered after they applied.
	h.mustCommand(CmdStatus, nil, nil)
	got, err := f.Opts.Workspace.ReadFile(path)
	if err != nil || string(got) != want {
		t.Errorf("buffer after 300 changes: %v\n%q\nwant\n%q", err, truncate(string(got), 200), truncate(want, 200))
	}
}

// §7: "a handler that calls the client without Async deadlocks". The
// server calls the client from a notification (didChangeConfiguration
// pulls workspace/configuration) and from a request (an approval during
// reika.ask); both must complete while the client keeps sending.
func TestSharpEdgeCallingTheClientDoesNotDeadlock(t *testing.T) {
	answered := make(chan struct{}, 8)
	h := start(t, harnessOptions{hooks: lsptest.Hooks{
		Configuration: func(json.RawMessage) (any, error) {
			answered <- struct{}{}
			return []any{map[string]any{"model": "pulled"}}, nil
		},
		ShowMessageRequest: func(json.RawMessage) (any, error) {
			return map[string]any{"title": ActionAllow}, nil
		},
	}, setup: func(f *fakeAgent) {
		f.Turn = func(ctx context.Context, f *fakeAgent, p agent.AskParams) agent.AskResult {
			d := f.Opts.Approver.Approve(ctx, approval.Request{Tool: "bash", Kind: "command", Summary: "run `ls`"})
			return agent.AskResult{Status: agent.AskDone, Message: fmt.Sprint(d)}
		}
	}})
	f := h.initialized()
	h.c.Notify(h.ctx, "workspace/didChangeConfiguration", map[string]any{"settings": nil})
	select {
	case <-answered:
	case <-h.ctx.Done():
		t.Fatal("workspace/configuration was never asked")
	}
	var res agent.AskResult
	h.mustCommand(CmdAsk, []any{map[string]any{"prompt": "list"}}, &res)
	if res.Message != fmt.Sprint(agent.Allow) {
		t.Errorf("approval during a turn = %s, want Allow", res.Message)
	}
	waitFor(t, h.ctx, func() bool { return len(f.Updates()) == 1 })
	if got := f.Updates()[0].Model; got != "pulled" {
		t.Errorf("settings after the pull: model %q", got)
	}
}

// §7: "$/cancelRequest needs a Preempter that parses numeric and string
// ids", and "replies and notifications sent on a cancelled context are
// dropped": the cancelled request still gets its RequestCancelled answer
// and its progress still ends.
func TestSharpEdgeCancelRequestNumericAndStringIDs(t *testing.T) {
	for _, id := range []any{int64(7), "ask-7", int64(1) << 53} {
		t.Run(fmt.Sprint(id), func(t *testing.T) {
			started := make(chan struct{})
			h := start(t, harnessOptions{setup: func(f *fakeAgent) { f.Turn = untilCancelled(started) }})
			f := h.initialized()
			if err := h.c.Send(id, "workspace/executeCommand", map[string]any{
				"command": CmdAsk, "arguments": []any{map[string]any{"prompt": "long"}}, "workDoneToken": "tok",
			}); err != nil {
				t.Fatal(err)
			}
			select {
			case <-started:
			case <-h.ctx.Done():
				t.Fatal("the turn did not start")
			}
			h.c.Notify(h.ctx, "$/cancelRequest", map[string]any{"id": id})
			resp, err := h.c.WaitResponse(h.ctx, id)
			if err != nil {
				t.Fatalf("no answer to the cancelled request: %v", err)
			}
			if resp.Err == nil || resp.Err.Code != -32800 {
				t.Errorf("cancelled request answered %+v, want RequestCancelled (-32800)", resp)
			}
			h.c.Wait(h.ctx, func(notes, _ []lsptest.Message) bool {
				kinds := progressKinds(t, notes, json.RawMessage(`"tok"`))
				return len(kinds) > 0 && kinds[len(kinds)-1] == "end"
			})
			if f.Running() {
				t.Error("the agent's turn is still running")
			}
		})
	}
}

// §7: "Conn.Close inside a handler or with a pending stdin read blocks (on
// exit, exit the process)". Exit is handled without closing the
// connection from the handler; Serve then closes it and returns.
func TestSharpEdgeExitDoesNotBlock(t *testing.T) {
	h := start(t, harnessOptions{})
	h.initialized()
	code, err := h.shutdownExit(true)
	if code != 0 || err != nil {
		t.Errorf("shutdown+exit: status %d, Serve returned %v; want 0 and nil", code, err)
	}
}

// §7: "encoding/json/v2 emits false/0 unless omitzero". The agent's types
// go out with encoding/json semantics: omitempty drops zero tokens and
// missing args, unknown windows are null.
func TestSharpEdgeJSONZeroValues(t *testing.T) {
	h := start(t, harnessOptions{setup: func(f *fakeAgent) {
		f.Turn = func(ctx context.Context, f *fakeAgent, p agent.AskParams) agent.AskResult {
			f.Opts.Events.Transcript(agent.Event{Session: "s1", Turn: 1, Kind: agent.EventInfo, Text: "x"})
			f.Opts.Events.Transcript(agent.Event{Session: "s1", Turn: 1, Round: 1, Kind: agent.EventToolCall, Tool: "read", Args: json.RawMessage(`{"path":"a.go"}`), Tokens: 12})
			f.Opts.Events.Status(agent.Status{Text: "ctx 16k", Level: agent.LevelOK, Size: 16000, WindowSource: llm.SourceNone})
			return agent.AskResult{Session: "s1", Status: agent.AskDone}
		}
	}})
	h.initialized()
	var res json.RawMessage
	h.mustCommand(CmdAsk, []any{map[string]any{"prompt": "p"}}, &res)
	if string(res) != `{"session":"s1","status":"done"}` {
		t.Errorf("ask result = %s", res)
	}
	ev := h.c.Notes(MethodTranscript)
	if got := string(ev[0].Params); got != `{"session":"s1","turn":1,"round":0,"kind":"info","text":"x","delta":false}` {
		t.Errorf("info event = %s", got)
	}
	if got := string(ev[1].Params); !strings.Contains(got, `"args":{"path":"a.go"}`) || !strings.Contains(got, `"tokens":12`) {
		t.Errorf("tool call event = %s", got)
	}
	st := h.waitNote(MethodStatus, func(m lsptest.Message) bool { return strings.Contains(string(m.Params), "ctx 16k") })
	if !strings.Contains(string(st.Params), `"window":null,"shedPoint":null,"percent":null`) {
		t.Errorf("status without a window = %s", st.Params)
	}
}

// §7: "Neovim sends empty tables as []: accept [] where {} is expected".
func TestSharpEdgeEmptyArraysForObjects(t *testing.T) {
	h := start(t, harnessOptions{hooks: lsptest.Hooks{
		Configuration: func(json.RawMessage) (any, error) { return []any{[]any{}}, nil },
	}})
	caps := map[string]any{"workspace": []any{}, "window": map[string]any{"workDoneProgress": true, "showMessage": []any{}}, "textDocument": []any{}}
	h.initialize(caps, []any{})
	f := h.agent()
	if f.Opts.Settings.Model != "" || f.Opts.Settings.BaseURL != llm.DefaultBaseURL {
		t.Errorf("settings from [] initializationOptions = %+v", f.Opts.Settings)
	}
	h.c.Notify(h.ctx, "workspace/didChangeConfiguration", map[string]any{"settings": []any{}})
	waitFor(t, h.ctx, func() bool { return len(f.Updates()) == 1 })
	var saved struct{ Path string }
	h.mustCommand(CmdSave, []any{[]any{}}, &saved)
	if saved.Path != "/state/session.md" {
		t.Errorf("reika.save [[]] = %+v", saved)
	}
	var actions []json.RawMessage
	if err := h.c.Call(h.ctx, "textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": "file:///x"}, "range": []any{}, "context": []any{}}, &actions); err != nil {
		t.Errorf("codeAction with [] context: %v", err)
	}
	// showMessage: [] is the capability, present: approvals are asked.
	if d := f.Opts.Approver.Approve(h.ctx, approval.Request{Summary: "edit a"}); d != agent.Deny {
		t.Errorf("approval with a null answer = %v, want Deny", d)
	}
	if len(h.c.Requests("window/showMessageRequest")) != 1 {
		t.Error("with showMessage: [] the client was not asked")
	}
}

// Found here: CancelHandler derives a context from the pooled request
// context, and a request handled inline returns it to the pool while the
// watcher goroutine of context.WithCancel may still call Done on it. Every
// call must be released with Async, also those answered at once.
func TestSharpEdgeManyQuickRequestsDoNotPanic(t *testing.T) {
	h := start(t, harnessOptions{})
	h.initialized()
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for i := range 400 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			method := "unknown/method"
			if i%2 == 0 {
				method = "initialize" // refused: already initialized
			}
			errs <- h.c.Call(h.ctx, method, map[string]any{}, nil)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if c := rpcCode(err); c != int(jsonrpc2.MethodNotFound) && c != int(jsonrpc2.InvalidRequest) {
			t.Fatalf("quick request: %v", err)
		}
	}
	h.mustCommand(CmdStatus, nil, nil)
}

// Found here: a request's method and params borrow the read buffer; a
// request released with Async must not use what it read before release.
// Concurrent requests with different params all get their own answers.
func TestSharpEdgeBorrowedParamsAfterAsync(t *testing.T) {
	h := start(t, harnessOptions{})
	h.initialized()
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := h.command(fmt.Sprintf("reika.unknown%03d", i), nil, nil)
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("reika.unknown%03d", i)) {
				t.Errorf("request %d answered %v", i, err)
			}
		}()
	}
	wg.Wait()
}

// waitFor polls cond until it holds (tests whose condition is not a
// notification: agent state).
func waitFor(t *testing.T, ctx context.Context, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatal("condition never held")
		case <-time.After(time.Millisecond):
		}
	}
}
