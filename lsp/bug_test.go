package lsp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/lsp/lsptest"
)

// Methods that panic, for the bug reporter's tests.
const (
	methodPanicRequest = "reika-test/panic"
	methodPanicNote    = "reika-test/panicNote"
)

func init() {
	requests[methodPanicRequest] = request{call: func(*server, context.Context, json.RawMessage) (any, error) {
		panic("injected request panic")
	}}
	notifications[methodPanicNote] = func(*server, json.RawMessage) { panic("injected notification panic") }
}

// checkBugReported checks that one bug was reported for want (a piece of
// the panic's value): one showMessage line (an error) naming a report
// file, and the file holding the panic and its stack, with frame.
func checkBugReported(t *testing.T, h *harness, want, frame string) {
	t.Helper()
	var lines []string
	for _, m := range h.c.Notes("window/showMessage") {
		p := decode[struct {
			Type    int
			Message string
		}](t, m.Params)
		if strings.Contains(p.Message, want) {
			lines = append(lines, p.Message)
			if p.Type != 1 || strings.Contains(p.Message, "\n") {
				t.Errorf("the bug's message %q is not one error line (type %d)", p.Message, p.Type)
			}
		}
	}
	if len(lines) != 1 {
		t.Fatalf("%d messages for the bug %q, want 1: %q", len(lines), want, lines)
	}
	reports, _ := filepath.Glob(filepath.Join(h.state, "reports", "bug-*.txt"))
	var path string
	for _, r := range reports {
		if strings.Contains(lines[0], r) {
			path = r
		}
	}
	if path == "" {
		t.Fatalf("the message %q names none of the reports %q", lines[0], reports)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if text := string(b); !strings.Contains(text, "panic:   "+want) || !strings.Contains(text, "goroutine ") || !strings.Contains(text, frame) {
		t.Errorf("the report lacks the panic or its stack (%s):\n%s", frame, text)
	}
}

// A panic in a request's handler answers that request with an internal
// error naming the report; one in a notification's is only reported; the
// connection and the session go on.
func TestHandlerPanicIsReported(t *testing.T) {
	h := start(t, harnessOptions{})
	h.initialized()
	err := h.c.Call(h.ctx, methodPanicRequest, map[string]any{}, nil)
	if rpcCode(err) != -32603 || !strings.Contains(err.Error(), "injected request panic") || !strings.Contains(err.Error(), "report: ") {
		t.Errorf("a request whose handler panicked: %v, want an InternalError naming the report", err)
	}
	checkBugReported(t, h, "injected request panic", "lsp.init.0.func1")
	h.c.Notify(h.ctx, methodPanicNote, map[string]any{})
	h.waitNote("window/showMessage", func(m lsptest.Message) bool { return strings.Contains(string(m.Params), "injected notification") })
	checkBugReported(t, h, "injected notification panic", "lsp.init.0.func2")
	var res agent.AskResult
	h.mustCommand(CmdAsk, []any{"p"}, &res)
	if res.Status != agent.AskDone {
		t.Errorf("ask after the panics = %+v", res)
	}
}

// A panic in a turn's work (the agent's Ask) ends the turn with an error
// naming the report, and the next ask runs.
func TestTurnPanicIsReported(t *testing.T) {
	h := start(t, harnessOptions{setup: func(f *fakeAgent) {
		f.Turn = func(_ context.Context, f *fakeAgent, p agent.AskParams) agent.AskResult {
			if p.Prompt == "panic" {
				panic("injected turn panic")
			}
			return agent.AskResult{Session: f.Session(), Status: agent.AskDone}
		}
	}})
	h.initialized()
	var res agent.AskResult
	h.mustCommand(CmdAsk, []any{"panic"}, &res)
	if res.Status != agent.AskError || !strings.Contains(res.Message, "injected turn panic") || !strings.Contains(res.Message, "report: ") {
		t.Errorf("ask whose turn panicked = %+v", res)
	}
	checkBugReported(t, h, "injected turn panic", "lsp.TestTurnPanicIsReported")
	h.mustCommand(CmdAsk, []any{"again"}, &res)
	if res.Status != agent.AskDone {
		t.Errorf("ask after the panic = %+v", res)
	}
}
