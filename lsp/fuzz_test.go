package lsp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
)

var probeSeq atomic.Int64

// probe sends a well-formed request and fails the test unless the server
// answers it (with a result or an error: after a fuzzed shutdown, requests
// are refused, which is an answer). It reports false when a fuzzed exit
// ended the session.
func probe(t *testing.T, h *harness) bool {
	t.Helper()
	select {
	case <-h.exits:
		return false
	default:
	}
	id := fmt.Sprintf("probe-%d", probeSeq.Add(1))
	if err := h.c.Send(id, "workspace/executeCommand", map[string]any{"command": CmdStatus}); err != nil {
		t.Fatalf("sending the probe: %v", err)
	}
	if _, err := h.c.WaitResponse(h.ctx, id); err != nil {
		select {
		case <-h.exits:
			return false
		default:
		}
		t.Fatalf("the server stopped answering: %v\nlog:\n%s", err, h.log)
	}
	if h.log.contains("BUG") {
		t.Fatalf("a handler panicked:\n%s", h.log)
	}
	return true
}

// declaredLengths is an upper bound of the body bytes the server may wait
// for after data: the sum of every Content-Length value in it.
func declaredLengths(data []byte) int {
	total := 0
	lower := bytes.ToLower(data)
	for i := 0; ; {
		j := bytes.Index(lower[i:], []byte("content-length:"))
		if j < 0 {
			return total
		}
		i += j + len("content-length:")
		rest := data[i:]
		if k := bytes.IndexByte(rest, '\n'); k >= 0 {
			rest = rest[:k]
		}
		if n, err := strconv.Atoi(string(bytes.TrimSpace(rest))); err == nil && n > 0 && n <= maxBody {
			total += n
		}
	}
}

// FuzzFrames feeds arbitrary bytes to an initialized server, then a
// well-formed request, which must be answered.
func FuzzFrames(f *testing.F) {
	for _, seed := range []string{
		"Content-Length: 10\r\n\r\n{\"a\":1}",
		"Content-Length: abc\r\n\r\n",
		frame(`{"jsonrpc":"2.0","id":1,"method":`),
		frame(`{"jsonrpc":"2.0","id":99999999999999999999,"method":"shutdown"}`),
		frame(`[{"jsonrpc":"2.0","id":1,"method":"shutdown"}]`),
		frame(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":[]}}`),
		frame(`{"jsonrpc":"2.0","id":2,"method":"workspace/executeCommand","params":{"command":"reika.ask","arguments":[{"prompt":"x","uri":"file:///nope","range":{"start":{"line":-1}}}]}}`),
		frame(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1e99}}`),
		"\r\n\r\n\n\ncontent-length:3\n\n{}}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pad := declaredLengths(data)
		if pad > 256<<10 {
			t.Skip("declares more body bytes than the test will send")
		}
		h := start(t, harnessOptions{})
		h.initialized()
		h.c.WriteRaw(data)
		// Whatever header block or body the data left open is completed
		// with line breaks, which the server reads as blank lines.
		h.c.WriteRaw(append([]byte("\r\n"), bytes.Repeat([]byte("\n"), pad+2)...))
		probe(t, h)
	})
}

// fuzzMethods are the methods FuzzParams sends params to.
var fuzzMethods = []string{
	"initialize", "initialized", "shutdown", "textDocument/didOpen", "textDocument/didChange",
	"textDocument/didClose", "textDocument/codeAction", "workspace/executeCommand",
	"workspace/didChangeConfiguration", "window/workDoneProgress/cancel", "$/cancelRequest",
	"$/setTrace", "reika/unknown",
}

// FuzzParams sends well-formed messages with arbitrary params (and ids) to
// every method the server handles, as requests and as notifications.
func FuzzParams(f *testing.F) {
	f.Add(uint8(7), true, []byte(`{"command":"reika.ask","arguments":[{"prompt":"hi","uri":"file:///x","range":{"start":{"line":0,"character":99},"end":{"line":9,"character":0}}}]}`), int64(5))
	f.Add(uint8(3), false, []byte(`{"textDocument":{"uri":"file:///a","version":1,"text":"😀"}}`), int64(0))
	f.Add(uint8(4), false, []byte(`{"textDocument":{"uri":"file:///a","version":2},"contentChanges":[{"range":{"start":{"line":0,"character":1},"end":{"line":0,"character":1}},"text":"x"}]}`), int64(0))
	f.Add(uint8(8), false, []byte(`{"settings":{"reika":{"contextWindow":-1}}}`), int64(0))
	f.Add(uint8(10), false, []byte(`{"id":"2"}`), int64(0))
	f.Add(uint8(6), true, []byte(`{"context":{"only":[[]]}}`), int64(-9223372036854775808))
	f.Add(uint8(7), true, []byte(`{"command":"reika.save","arguments":[{"path":"/dev/null"}]}`), int64(1)<<62)
	f.Fuzz(func(t *testing.T, m uint8, call bool, params []byte, id int64) {
		method := fuzzMethods[int(m)%len(fuzzMethods)]
		if !json.Valid(params) {
			params, _ = json.Marshal(string(params))
		}
		h := start(t, harnessOptions{})
		h.initialized()
		var msg []byte
		if call {
			msg = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
		} else {
			msg = fmt.Appendf(nil, `{"jsonrpc":"2.0","method":%q,"params":%s}`, method, params)
		}
		if err := h.c.WriteFrame(msg); err != nil {
			t.Fatal(err)
		}
		if call {
			if _, err := h.c.WaitResponse(h.ctx, id); err != nil {
				t.Fatalf("no answer to %s: %v", msg, err)
			}
		}
		probe(t, h)
	})
}
