package lsp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/lsp/lsptest"
)

// startLongTurn starts a reika.ask whose turn runs until cancelled and
// waits until it has reported its first round. The channel gets the ask's
// result.
func startLongTurn(t *testing.T, h *harness, started chan struct{}, token any) <-chan askOutcome {
	t.Helper()
	out := make(chan askOutcome, 1)
	params := map[string]any{"command": CmdAsk, "arguments": []any{map[string]any{"prompt": "work"}}}
	if token != nil {
		params["workDoneToken"] = token
	}
	go func() {
		var res agent.AskResult
		err := h.c.Call(h.ctx, "workspace/executeCommand", params, &res)
		out <- askOutcome{res, err}
	}()
	select {
	case <-started:
	case <-h.ctx.Done():
		t.Fatal("the turn did not start")
	}
	return out
}

type askOutcome struct {
	res agent.AskResult
	err error
}

func (h *harness) outcome(ch <-chan askOutcome) askOutcome {
	h.t.Helper()
	select {
	case o := <-ch:
		return o
	case <-h.ctx.Done():
		h.t.Fatal("reika.ask never answered")
	}
	return askOutcome{}
}

func TestRequestsAreAnsweredDuringATurn(t *testing.T) {
	started := make(chan struct{})
	h := start(t, harnessOptions{setup: func(f *fakeAgent) { f.Turn = untilCancelled(started) }})
	h.initialized()
	ask := startLongTurn(t, h, started, nil)

	var st agent.Status
	h.mustCommand(CmdStatus, nil, &st)
	var actions []struct {
		Title   string
		Kind    string
		Command struct{ Title, Command string }
		Edit    json.RawMessage
	}
	if err := h.c.Call(h.ctx, "textDocument/codeAction", codeActionRequest(nil), &actions); err != nil {
		t.Fatalf("codeAction during a turn: %v", err)
	}
	if len(actions) != 1 || actions[0].Title != "Compact context" || actions[0].Kind != "source.compactContext" ||
		actions[0].Command.Command != "reika.compact" || actions[0].Edit != nil {
		t.Errorf("code actions during a turn = %+v", actions)
	}
	select {
	case o := <-ask:
		t.Fatalf("the turn ended before the requests were answered: %+v", o)
	default:
	}

	// A second ask is answered at once, with an error.
	var second agent.AskResult
	h.mustCommand(CmdAsk, []any{map[string]any{"prompt": "again"}}, &second)
	if second.Status != agent.AskError || !strings.Contains(second.Message, "running") || second.Session != "s1" {
		t.Errorf("second ask = %+v", second)
	}

	var cancelled struct{ Cancelled bool }
	h.mustCommand(CmdCancel, []any{}, &cancelled)
	if !cancelled.Cancelled {
		t.Error("reika.cancel during a turn says nothing was cancelled")
	}
	if o := h.outcome(ask); o.err != nil || o.res.Status != agent.AskCancelled {
		t.Errorf("cancelled ask = %+v, %v", o.res, o.err)
	}
	h.mustCommand(CmdCancel, nil, &cancelled)
	if cancelled.Cancelled {
		t.Error("reika.cancel with no turn running says it cancelled one")
	}
}

func codeActionRequest(only []string) map[string]any {
	ctx := map[string]any{"diagnostics": []any{}}
	if only != nil {
		ctx["only"] = only
	}
	return map[string]any{
		"textDocument": map[string]any{"uri": "file:///tmp/x.go"},
		"range":        map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 0, "character": 0}},
		"context":      ctx,
	}
}

func TestProgressCancelStopsTheTurn(t *testing.T) {
	for _, tc := range []struct {
		name  string
		token any // the client's workDoneToken; nil: the server creates one
	}{{"client token", 42}, {"created token", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			started := make(chan struct{})
			h := start(t, harnessOptions{setup: func(f *fakeAgent) { f.Turn = untilCancelled(started) }})
			h.initialized()
			ask := startLongTurn(t, h, started, tc.token)
			var token json.RawMessage
			if tc.token != nil {
				token, _ = json.Marshal(tc.token)
			} else {
				h.c.Wait(h.ctx, func(_, r []lsptest.Message) bool { return len(r) > 0 })
				token = decode[struct{ Token json.RawMessage }](t, h.c.Requests("window/workDoneProgress/create")[0].Params).Token
			}
			h.c.Wait(h.ctx, func(n, _ []lsptest.Message) bool { return len(progressKinds(t, n, token)) >= 2 })
			h.c.Notify(h.ctx, "window/workDoneProgress/cancel", map[string]any{"token": json.RawMessage(token)})
			if o := h.outcome(ask); o.err != nil || o.res.Status != agent.AskCancelled {
				t.Errorf("ask after progress cancel = %+v, %v", o.res, o.err)
			}
			h.c.Wait(h.ctx, func(n, _ []lsptest.Message) bool {
				k := progressKinds(t, n, token)
				return len(k) > 0 && k[len(k)-1] == "end"
			})
			if got := progressKinds(t, h.c.Notes(""), token); got[0] != "begin" || got[1] != "report" {
				t.Errorf("progress = %v", got)
			}
			if v := progressValues(t, h.c.Notes(""), token); v[len(v)-1].Message != "Cancelled" {
				t.Errorf("end = %+v", v[len(v)-1])
			}
		})
	}
}

// A client that answers window/workDoneProgress/create only after the turn
// has ended still gets begin before the reports and end.
func TestProgressCreateAnsweredLate(t *testing.T) {
	release := make(chan struct{})
	h := start(t, harnessOptions{hooks: lsptest.Hooks{
		WorkDoneProgressCreate: func(json.RawMessage) error { <-release; return nil },
	}})
	h.initialized()
	var res agent.AskResult
	h.mustCommand(CmdAsk, []any{map[string]any{"prompt": "p"}}, &res)
	if res.Status != agent.AskDone {
		t.Fatalf("ask = %+v", res)
	}
	h.c.Wait(h.ctx, func(_, r []lsptest.Message) bool { return len(r) > 0 })
	creates := h.c.Requests("window/workDoneProgress/create")
	token := decode[struct{ Token json.RawMessage }](t, creates[0].Params).Token
	if n := len(progressValues(t, h.c.Notes(""), token)); n != 0 {
		t.Fatalf("%d progress notifications before the client answered create", n)
	}
	close(release)
	h.c.Wait(h.ctx, func(n, _ []lsptest.Message) bool { return len(progressKinds(t, n, token)) == 4 })
	if got := progressKinds(t, h.c.Notes(""), token); strings.Join(got, ",") != "begin,report,report,end" {
		t.Errorf("progress = %v", got)
	}
}

// Without a token and without window.workDoneProgress, no $/progress.
func TestNoProgressWithoutSupport(t *testing.T) {
	h := start(t, harnessOptions{})
	h.initialize(map[string]any{}, nil)
	h.agent()
	h.mustCommand(CmdAsk, []any{map[string]any{"prompt": "p"}}, nil)
	if n := len(h.c.Notes("$/progress")) + len(h.c.Requests("")); n != 0 {
		t.Errorf("%d progress messages to a client without progress support", n)
	}
}

func TestShutdownCancelsTheTurn(t *testing.T) {
	started := make(chan struct{})
	h := start(t, harnessOptions{setup: func(f *fakeAgent) { f.Turn = untilCancelled(started) }})
	f := h.initialized()
	ask := startLongTurn(t, h, started, "t")
	if err := h.c.Call(h.ctx, "shutdown", nil, nil); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if o := h.outcome(ask); o.err != nil || o.res.Status != agent.AskCancelled {
		t.Errorf("ask after shutdown = %+v, %v", o.res, o.err)
	}
	if !f.Closed() {
		t.Error("the agent was not closed by shutdown")
	}
	if err := h.command(CmdStatus, nil, nil); rpcCode(err) != -32600 {
		t.Errorf("request after shutdown: %v, want InvalidRequest", err)
	}
	code, err := h.shutdownExit(false)
	if code != 0 || err != nil {
		t.Errorf("exit after shutdown: status %d, Serve: %v", code, err)
	}
}

func TestExitWithoutShutdown(t *testing.T) {
	h := start(t, harnessOptions{})
	f := h.initialized()
	code, err := h.shutdownExit(false)
	if code != 1 || err != ErrNoShutdown {
		t.Errorf("exit without shutdown: status %d, Serve: %v; want 1 and ErrNoShutdown", code, err)
	}
	if !f.Closed() {
		t.Error("the agent was not closed on exit")
	}
}

// The client going away (end of input) without shutdown ends Serve with
// ErrNoShutdown and cancels the running turn.
func TestConnectionLostDuringATurn(t *testing.T) {
	started := make(chan struct{})
	h := start(t, harnessOptions{setup: func(f *fakeAgent) { f.Turn = untilCancelled(started) }})
	f := h.initialized()
	startLongTurn(t, h, started, nil)
	h.c.Disconnect()
	select {
	case err := <-h.served:
		h.served <- err
		if err != ErrNoShutdown {
			t.Errorf("Serve after the client left = %v, want ErrNoShutdown", err)
		}
	case <-h.ctx.Done():
		t.Fatal("Serve did not return after the client left")
	}
	if !f.Closed() || f.Running() {
		t.Error("the turn outlived the connection")
	}
}

func TestCodeActionOfferedOnceTheSessionHasATurn(t *testing.T) {
	h := start(t, harnessOptions{})
	h.initialized()
	actions := func(only []string) int {
		var a []json.RawMessage
		if err := h.c.Call(h.ctx, "textDocument/codeAction", codeActionRequest(only), &a); err != nil {
			t.Fatalf("codeAction: %v", err)
		}
		return len(a)
	}
	if n := actions(nil); n != 0 {
		t.Errorf("%d actions before any turn", n)
	}
	h.mustCommand(CmdAsk, []any{map[string]any{"prompt": "p"}}, nil)
	for _, tc := range []struct {
		only []string
		want int
	}{
		{nil, 1}, {[]string{}, 1}, {[]string{"source"}, 1}, {[]string{"source.compactContext"}, 1},
		{[]string{"quickfix"}, 0}, {[]string{"source.organizeImports"}, 0}, {[]string{"refactor", "source"}, 1},
		{[]string{"sour"}, 0},
	} {
		if n := actions(tc.only); n != tc.want {
			t.Errorf("only %v: %d actions, want %d", tc.only, n, tc.want)
		}
	}
}

func TestCompact(t *testing.T) {
	h := start(t, harnessOptions{setup: func(f *fakeAgent) {
		calls := 0
		f.Fold = func(ctx context.Context, f *fakeAgent) agent.CompactResult {
			calls++
			if calls == 1 {
				f.Opts.Events.Transcript(agent.Event{Session: "s1", Kind: agent.EventNote, Text: "established: x"})
				f.Opts.Events.Transcript(agent.Event{Session: "s1", Kind: agent.EventFold, Text: "recap", Tokens: 1300})
				f.Opts.Events.Notice(agent.Notice{Level: "info", Text: "Folded 12 rounds into a 1.3k-token recap"})
				return agent.CompactResult{Folded: true, RecapTokens: 1300, Message: "Folded 12 rounds into a 1.3k-token recap"}
			}
			f.Opts.Events.Notice(agent.Notice{Level: "info", Text: "Nothing to fold"})
			return agent.CompactResult{Message: "Nothing to fold"}
		}
	}})
	h.initialized()
	var res json.RawMessage
	h.mustCommand(CmdCompact, []any{}, &res)
	if string(res) != `{"folded":true,"recapTokens":1300,"message":"Folded 12 rounds into a 1.3k-token recap"}` {
		t.Errorf("compact = %s", res)
	}
	kinds := []string{}
	for _, m := range h.c.Notes(MethodTranscript) {
		kinds = append(kinds, decode[agent.Event](t, m.Params).Kind)
	}
	if strings.Join(kinds, ",") != "note,fold" {
		t.Errorf("compact transcript = %v, want the note then the fold", kinds)
	}
	h.mustCommand(CmdCompact, nil, &res)
	if string(res) != `{"folded":false,"message":"Nothing to fold"}` {
		t.Errorf("second compact = %s", res)
	}
	var msgs []string
	for _, m := range h.c.Notes("window/showMessage") {
		p := decode[struct {
			Type    int
			Message string
		}](t, m.Params)
		msgs = append(msgs, p.Message)
		if p.Type != 3 {
			t.Errorf("%q has type %d, want Info (3)", p.Message, p.Type)
		}
	}
	if strings.Join(msgs, "|") != "Folded 12 rounds into a 1.3k-token recap|Nothing to fold" {
		t.Errorf("messages = %q", msgs)
	}
}

func TestSaveAndNewSession(t *testing.T) {
	h := start(t, harnessOptions{})
	f := h.initialized()
	var saved struct{ Path string }
	h.mustCommand(CmdSave, nil, &saved)
	if saved.Path != "/state/session.md" {
		t.Errorf("save with no path = %q", saved.Path)
	}
	h.mustCommand(CmdSave, []any{map[string]any{"path": "notes/s.md"}}, &saved)
	if saved.Path != h.root+"/notes/s.md" {
		t.Errorf("save to a relative path = %q, want it under the root", saved.Path)
	}
	h.mustCommand(CmdSave, []any{map[string]any{"path": "/abs/s.md"}}, &saved)
	if saved.Path != "/abs/s.md" {
		t.Errorf("save to an absolute path = %q", saved.Path)
	}
	if err := h.command(CmdSave, []any{map[string]any{"path": 3}}, nil); rpcCode(err) != -32602 {
		t.Errorf("save with a number for a path: %v, want InvalidParams", err)
	}
	var ns struct{ Session string }
	h.mustCommand(CmdNewSession, nil, &ns)
	if ns.Session == "" || ns.Session == "s1" || ns.Session != f.Session() {
		t.Errorf("newSession = %q (agent: %q)", ns.Session, f.Session())
	}
	h.waitNote(MethodStatus, func(m lsptest.Message) bool {
		return strings.Contains(string(m.Params), `"session":"`+ns.Session+`"`)
	})
}

func TestAskArguments(t *testing.T) {
	h := start(t, harnessOptions{})
	f := h.initialized()
	for _, args := range [][]any{nil, {}, {map[string]any{}}, {map[string]any{"prompt": "  "}}, {map[string]any{"prompt": 5}}, {7}, {map[string]any{"prompt": "p", "range": map[string]any{}}}} {
		if err := h.command(CmdAsk, args, nil); rpcCode(err) != -32602 {
			t.Errorf("ask %v: %v, want InvalidParams", args, err)
		}
	}
	// A bare string is taken as the prompt.
	var res agent.AskResult
	h.mustCommand(CmdAsk, []any{"just text"}, &res)
	if asks := f.Asks(); res.Status != agent.AskDone || len(asks) != 1 || asks[0].Prompt != "just text" {
		t.Errorf("ask with a string argument = %+v, agent got %+v", res, asks)
	}
}

func TestAskAttachesTheSelection(t *testing.T) {
	h := start(t, harnessOptions{})
	f := h.initialized()
	path := h.root + "/src/a.go"
	text := "package a\n\nfunc 😀() {\n\treturn\n}\n"
	h.c.Notify(h.ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": "file://" + path, "languageId": "go", "version": 1, "text": text}})
	rng := func(l1, c1, l2, c2 int) map[string]any {
		return map[string]any{"start": map[string]any{"line": l1, "character": c1}, "end": map[string]any{"line": l2, "character": c2}}
	}
	tests := []struct {
		rng  any
		want *agent.Attachment
	}{
		{rng(2, 0, 5, 0), &agent.Attachment{Path: "src/a.go", StartLine: 3, EndLine: 5, Text: "func 😀() {\n\treturn\n}\n"}},
		{rng(2, 5, 2, 7), &agent.Attachment{Path: "src/a.go", StartLine: 3, EndLine: 3, Text: "😀"}},
		{rng(3, 1, 2, 5), &agent.Attachment{Path: "src/a.go", StartLine: 3, EndLine: 4, Text: "😀() {\n\t"}},
		{rng(1, 0, 1, 0), nil},
		{nil, &agent.Attachment{Path: "src/a.go", StartLine: 1, EndLine: 5, Text: text}},
	}
	for i, tc := range tests {
		arg := map[string]any{"prompt": "explain", "uri": "file://" + path}
		if tc.rng != nil {
			arg["range"] = tc.rng
		}
		h.mustCommand(CmdAsk, []any{arg}, nil)
		got := f.Asks()[i].Attachment
		if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("range %v: attachment %+v, want %+v", tc.rng, got, tc.want)
		}
	}
	// A file that is not open is read from disk; one that does not exist is
	// an error.
	if err := h.command(CmdAsk, []any{map[string]any{"prompt": "p", "uri": "file://" + h.root + "/missing.go"}}, nil); rpcCode(err) != -32602 {
		t.Errorf("ask attaching a missing file: %v, want InvalidParams", err)
	}
}

func TestNoticesBecomeShowMessage(t *testing.T) {
	h := start(t, harnessOptions{setup: func(f *fakeAgent) {
		f.Turn = func(ctx context.Context, f *fakeAgent, p agent.AskParams) agent.AskResult {
			f.Opts.Events.Notice(agent.Notice{Level: "warning", Text: "Context at 80% of the shed point"})
			f.Opts.Events.Notice(agent.Notice{Level: "error", Text: "Engine unreachable at http://127.0.0.1:8080/v1"})
			f.Opts.Events.Status(agent.Status{Text: "ctx –", Level: agent.LevelError, Tooltip: "engine unreachable"})
			return agent.AskResult{Status: agent.AskError, Message: "engine unreachable"}
		}
	}})
	h.initialized()
	var res agent.AskResult
	h.mustCommand(CmdAsk, []any{map[string]any{"prompt": "p"}}, &res)
	if res.Status != agent.AskError || res.Message != "engine unreachable" {
		t.Errorf("ask = %+v", res)
	}
	var got []string
	for _, m := range h.c.Notes("window/showMessage") {
		p := decode[struct {
			Type    int
			Message string
		}](t, m.Params)
		got = append(got, p.Message+"/"+string(rune('0'+p.Type)))
	}
	if strings.Join(got, "|") != "Context at 80% of the shed point/2|Engine unreachable at http://127.0.0.1:8080/v1/1" {
		t.Errorf("showMessage = %q", got)
	}
	h.waitNote(MethodStatus, func(m lsptest.Message) bool { return strings.Contains(string(m.Params), `"level":"error"`) })
}

func TestAgentPanicDoesNotTakeTheServerDown(t *testing.T) {
	h := start(t, harnessOptions{setup: func(f *fakeAgent) {
		f.Turn = func(context.Context, *fakeAgent, agent.AskParams) agent.AskResult { panic("boom") }
	}})
	h.initialized()
	var res agent.AskResult
	h.mustCommand(CmdAsk, []any{map[string]any{"prompt": "p"}}, &res)
	if res.Status != agent.AskError || !strings.Contains(res.Message, "boom") {
		t.Errorf("ask with a panicking agent = %+v", res)
	}
	h.mustCommand(CmdStatus, nil, nil)
	if !h.log.contains("BUG") {
		t.Error("the panic was not logged")
	}
}
