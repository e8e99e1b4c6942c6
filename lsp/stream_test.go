package lsp

import (
	"fmt"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// Malformed input is answered (when it can be) and skipped; the requests
// after it are served.
func TestMalformedFramesAreSurvived(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		// wantErr is the code of the error response the junk gets, 0 for
		// none; wantID its id (nil: null).
		wantErr int
		wantID  any
	}{
		{"no content length", "Content-Type: x\r\n\r\n{}", 0, nil},
		{"non-numeric length", "Content-Length: abc\r\n\r\n{\"jsonrpc\":\"2.0\"}", 0, nil},
		{"negative length", "Content-Length: -5\r\n\r\n", 0, nil},
		{"zero length", "Content-Length: 0\r\n\r\n", 0, nil},
		{"overflowing length", "Content-Length: 99999999999999999999999\r\n\r\n", 0, nil},
		{"junk lines", "hello\r\nworld\n\n", 0, nil},
		{"junk without a line break", "{\"garbage\": true}", 0, nil},
		{"invalid JSON", frame(`{"jsonrpc":"2.0","id":1,"method":`), -32700, nil},
		{"not an object", frame(`42`), -32600, nil},
		{"batch", frame(`[{"jsonrpc":"2.0","id":5,"method":"shutdown"}]`), -32600, nil},
		{"empty batch", frame(`[]`), -32600, nil},
		{"wrong version", frame(`{"jsonrpc":"1.0","id":3,"method":"workspace/executeCommand"}`), -32600, int64(3)},
		{"method not a string", frame(`{"jsonrpc":"2.0","id":"m","method":12}`), -32600, "m"},
		{"huge numeric id", frame(`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"shutdown"}`), -32600, nil},
		{"fractional id", frame(`{"jsonrpc":"2.0","id":1.5,"method":"shutdown"}`), -32600, nil},
		{"object id", frame(`{"jsonrpc":"2.0","id":{},"method":"shutdown"}`), -32600, nil},
		{"response to nothing", frame(`{"jsonrpc":"2.0","id":77,"result":{}}`), 0, nil},
		{"malformed response", frame(`{"jsonrpc":"2.0","id":[],"result":1}`), 0, nil},
		{"invalid UTF-8", frame("{\"jsonrpc\":\"2.0\",\"method\":\"x\xff\"}"), 0, nil},
		{"length longer than the header block", "Content-Length: 5\r\nContent-Length: 6\r\n\r\n{\"a\":1}", -32700, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, harnessOptions{})
			h.initialized()
			before := len(h.c.Responses())
			if err := h.c.WriteRaw([]byte(tc.raw)); err != nil {
				t.Fatal(err)
			}
			// The junk may have swallowed the start of what follows (a
			// header line glued to junk is still found); a blank line ends
			// any header block it left open.
			h.c.WriteRaw([]byte("\r\n"))
			if err := h.c.Send("probe", "workspace/executeCommand", map[string]any{"command": CmdStatus}); err != nil {
				t.Fatal(err)
			}
			resp, err := h.c.WaitResponse(h.ctx, "probe")
			if err != nil || resp.Err != nil {
				t.Fatalf("request after %q: %+v, %v", tc.raw, resp, err)
			}
			var junkAnswers []string
			for _, r := range h.c.Responses()[before:] {
				if r.ID != jsonrpc2.NewStringID("probe") {
					junkAnswers = append(junkAnswers, fmt.Sprintf("%v %v", r.ID, r.Err))
				}
			}
			if tc.wantErr == 0 {
				if len(junkAnswers) != 0 {
					t.Errorf("junk answered with %v", junkAnswers)
				}
				return
			}
			var want jsonrpc2.ID
			switch id := tc.wantID.(type) {
			case int64:
				want = jsonrpc2.NewNumberID(id)
			case string:
				want = jsonrpc2.NewStringID(id)
			}
			r, err := h.c.WaitResponse(h.ctx, tc.wantID)
			if err != nil || r.Err == nil || int(r.Err.Code) != tc.wantErr || r.ID != want {
				t.Errorf("junk answered %+v (%v), want error %d with id %v", r, err, tc.wantErr, tc.wantID)
			}
		})
	}
}

func frame(body string) string {
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

// Well-formed messages with params of the wrong shape: requests get an
// error, notifications are dropped, nothing ends the connection.
func TestWrongParamTypes(t *testing.T) {
	h := start(t, harnessOptions{})
	if err := h.c.Call(h.ctx, "initialize", "not an object", nil); err != nil {
		t.Fatalf("initialize with string params: %v (want it treated as empty)", err)
	}
	h.c.Notify(h.ctx, "initialized", []any{})
	h.agent()
	for _, n := range []struct {
		method string
		params any
	}{
		{"textDocument/didOpen", 5},
		{"textDocument/didOpen", map[string]any{"textDocument": "x"}},
		{"textDocument/didChange", []any{1, 2}},
		{"textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": "file:///nope"}, "contentChanges": "x"}},
		{"textDocument/didClose", true},
		{"workspace/didChangeConfiguration", "settings"},
		{"window/workDoneProgress/cancel", map[string]any{"token": []any{}}},
		{"$/cancelRequest", map[string]any{"id": map[string]any{}}},
		{"$/cancelRequest", "x"},
		{"exit", 5},
	} {
		if n.method == "exit" {
			continue // would end the session: tested elsewhere
		}
		if err := h.c.Notify(h.ctx, n.method, n.params); err != nil {
			t.Fatalf("%s: %v", n.method, err)
		}
	}
	for _, r := range []struct {
		method string
		params any
		code   int
	}{
		{"workspace/executeCommand", 5, 0},
		{"workspace/executeCommand", map[string]any{"command": 5}, -32602},
		{"workspace/executeCommand", map[string]any{"command": CmdAsk, "arguments": "x"}, -32602},
		{"textDocument/codeAction", "x", 0},
	} {
		err := h.c.Call(h.ctx, r.method, r.params, nil)
		if rpcCode(err) != r.code && !(r.code == 0 && rpcCode(err) == -32602) {
			t.Errorf("%s %v: %v, want code %d", r.method, r.params, err, r.code)
		}
	}
	h.mustCommand(CmdStatus, nil, nil)
	if !strings.Contains(h.log.String(), "didOpen: bad params") {
		t.Error("bad notification params were not logged")
	}
}

// A header glued to the end of junk (no line break between them) is found.
func TestHeaderAfterJunkOnTheSameLine(t *testing.T) {
	h := start(t, harnessOptions{})
	h.initialized()
	body := `{"jsonrpc":"2.0","id":"glued","method":"workspace/executeCommand","params":{"command":"reika.status"}}`
	h.c.WriteRaw([]byte("Content-Length: nope\r\n\r\n{junk body}" + frame(body)))
	if r, err := h.c.WaitResponse(h.ctx, "glued"); err != nil || r.Err != nil {
		t.Errorf("glued request: %+v, %v", r, err)
	}
}

func TestContentLength(t *testing.T) {
	for line, want := range map[string]struct {
		n         int
		ok, found bool
	}{
		"Content-Length: 12\r\n":        {12, true, true},
		"content-length:7\n":            {7, true, true},
		"CONTENT-LENGTH:   3  \r\n":     {3, true, true},
		"junk Content-Length: 9\r\n":    {9, true, true},
		"Content-Length: 1x\r\n":        {0, false, true},
		"Content-Length: 268435457\r\n": {0, false, true},
		"Content-Type: a\r\n":           {0, false, false},
	} {
		n, ok, found := contentLength([]byte(line))
		if n != want.n || ok != want.ok || found != want.found {
			t.Errorf("contentLength(%q) = %d %v %v, want %+v", line, n, ok, found, want)
		}
	}
}
