// Command lspdouble is a scripted stand-in for reika-lsp, for the Neovim
// plugin's tests: it speaks the editor protocol of PROTOCOL.md over stdio
// (initialize, the reika.* commands, the Compact context code action,
// reika/status, reika/transcript, $/progress, window/showMessage and
// window/showMessageRequest approvals) with a fixed script instead of an
// agent, so the plugin's side of the protocol can be tested on its own. The
// end-to-end tests run the real binary instead.
//
// The script of one reika.ask: the user event; a streamed assistant
// message; a read tool call and its result, after which the status crosses
// 80% of the shed point (level warning, one window/showMessage); a final
// answer. A prompt can steer it:
//
//	[approve]  ask for approval (window/showMessageRequest) and record the answer as an info event
//	[applyedit]EDIT  send workspace/applyEdit with the WorkspaceEdit EDIT (JSON, the rest of the
//	           prompt) and record the client's answer as an info event ("applyEdit: ANSWER")
//	[wait]     wait until the turn is cancelled ($/cancelRequest, reika.cancel)
//	[crash]    exit with status 3 at once
//
// reika.compact sends a note and a fold event and drops the size back.
// The status tooltip carries what the client sent (settings, open documents)
// so tests can check it.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"github.com/reika-lsp/reika-lsp/agent"
	"io"
	"net/textproto"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "version" {
		fmt.Println("lspdouble (reika-lsp test double)")
		return
	}
	s := newServer(os.Stdin, os.Stdout)
	os.Exit(s.serve())
}

type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// The double sends the server's own shapes (agent/api.go).
type (
	event  = agent.Event
	status = agent.Status
)

const (
	window    = 16000
	shedPoint = 12556
)

type server struct {
	in *bufio.Reader

	wmu sync.Mutex // guards out
	out io.Writer

	mu          sync.Mutex // guards everything below
	initialized bool
	shutdown    bool
	settings    json.RawMessage
	model       string
	session     int
	turns       int
	size        int
	busy        bool
	warned      bool
	turnCancel  context.CancelFunc
	events      []event
	openDocs    map[string]bool
	nextID      int
	pending     map[string]chan message
	cancels     map[string]context.CancelFunc
}

func newServer(in io.Reader, out io.Writer) *server {
	return &server{
		in:       bufio.NewReader(in),
		out:      out,
		session:  1,
		size:     1200,
		model:    "double-model",
		openDocs: map[string]bool{},
		pending:  map[string]chan message{},
		cancels:  map[string]context.CancelFunc{},
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "lspdouble: "+format+"\n", args...)
}

func (s *server) serve() int {
	tp := textproto.NewReader(s.in)
	for {
		hdr, err := tp.ReadMIMEHeader()
		if err != nil {
			if err != io.EOF {
				logf("read header: %v", err)
			}
			return 1
		}
		n, err := strconv.Atoi(hdr.Get("Content-Length"))
		if err != nil {
			logf("bad Content-Length: %v", err)
			return 1
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(s.in, body); err != nil {
			logf("read body: %v", err)
			return 1
		}
		var m message
		if err := json.Unmarshal(body, &m); err != nil {
			logf("bad message: %v", err)
			continue
		}
		switch {
		case m.Method != "" && len(m.ID) > 0:
			ctx, cancel := context.WithCancel(context.Background())
			s.mu.Lock()
			s.cancels[string(m.ID)] = cancel
			s.mu.Unlock()
			go func() {
				defer cancel()
				result, rerr := s.request(ctx, m)
				s.mu.Lock()
				delete(s.cancels, string(m.ID))
				s.mu.Unlock()
				s.reply(m.ID, result, rerr)
			}()
		case m.Method != "":
			if code, exit := s.notification(m); exit {
				return code
			}
		case len(m.ID) > 0:
			s.mu.Lock()
			ch := s.pending[string(m.ID)]
			delete(s.pending, string(m.ID))
			s.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
	}
}

func (s *server) write(v any) {
	body, err := json.Marshal(v)
	if err != nil {
		logf("marshal: %v", err)
		return
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	fmt.Fprintf(s.out, "Content-Length: %d\r\n\r\n%s", len(body), body)
}

func (s *server) reply(id json.RawMessage, result any, err *rpcError) {
	m := map[string]any{"jsonrpc": "2.0", "id": id}
	if err != nil {
		m["error"] = err
	} else {
		m["result"] = result
	}
	s.write(m)
}

func (s *server) notify(method string, params any) {
	s.write(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// call sends a request to the client and waits for its answer.
func (s *server) call(method string, params any) (message, error) {
	s.mu.Lock()
	s.nextID++
	id := strconv.Itoa(s.nextID)
	ch := make(chan message, 1)
	s.pending[id] = ch
	s.mu.Unlock()
	s.write(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method, "params": params})
	select {
	case m := <-ch:
		if len(m.Error) > 0 {
			return m, fmt.Errorf("%s: %s", method, m.Error)
		}
		return m, nil
	case <-time.After(60 * time.Second): // a hang guard
		return message{}, fmt.Errorf("%s: no answer", method)
	}
}

func (s *server) notification(m message) (code int, exit bool) {
	switch m.Method {
	case "initialized":
		s.sendStatus()
	case "exit":
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.shutdown {
			return 0, true
		}
		return 1, true
	case "$/cancelRequest":
		var p struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			s.mu.Lock()
			cancel := s.cancels[string(p.ID)]
			s.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		}
	case "textDocument/didOpen", "textDocument/didClose":
		var p struct {
			TextDocument struct {
				URI string `json:"uri"`
			} `json:"textDocument"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			s.mu.Lock()
			s.openDocs[p.TextDocument.URI] = m.Method == "textDocument/didOpen"
			if m.Method == "textDocument/didClose" {
				delete(s.openDocs, p.TextDocument.URI)
			}
			s.mu.Unlock()
		}
	case "workspace/didChangeConfiguration":
		// Pull the settings, as the real server does.
		go func() {
			resp, err := s.call("workspace/configuration", map[string]any{
				"items": []map[string]any{{"section": "reika"}},
			})
			if err != nil {
				logf("%v", err)
				return
			}
			var items []json.RawMessage
			if json.Unmarshal(resp.Result, &items) == nil && len(items) == 1 {
				s.setSettings(items[0])
			}
			s.sendStatus()
		}()
	}
	return 0, false
}

func (s *server) setSettings(raw json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settings = raw
	var obj map[string]any
	if json.Unmarshal(raw, &obj) == nil {
		if m, ok := obj["model"].(string); ok && m != "" {
			s.model = m
		}
	}
}

func (s *server) request(ctx context.Context, m message) (any, *rpcError) {
	s.mu.Lock()
	initialized := s.initialized
	s.mu.Unlock()
	if m.Method != "initialize" && !initialized {
		return nil, &rpcError{Code: -32002, Message: "server not initialized"}
	}
	switch m.Method {
	case "initialize":
		var p struct {
			InitializationOptions struct {
				Reika json.RawMessage `json:"reika"`
			} `json:"initializationOptions"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return nil, &rpcError{Code: -32602, Message: err.Error()}
		}
		s.setSettings(p.InitializationOptions.Reika)
		s.mu.Lock()
		s.initialized = true
		s.mu.Unlock()
		return map[string]any{
			"capabilities": map[string]any{
				"executeCommandProvider": map[string]any{"commands": []string{
					"reika.ask", "reika.compact", "reika.cancel", "reika.status", "reika.save", "reika.newSession",
				}},
				"codeActionProvider": map[string]any{"codeActionKinds": []string{"source.compactContext"}},
				"textDocumentSync":   map[string]any{"openClose": true, "change": 2},
				"workspace":          map[string]any{"workspaceFolders": map[string]any{"supported": true}},
			},
			"serverInfo": map[string]any{"name": "lspdouble"},
		}, nil
	case "shutdown":
		s.mu.Lock()
		s.shutdown = true
		s.mu.Unlock()
		return nil, nil
	case "textDocument/codeAction":
		return s.codeActions(m.Params), nil
	case "workspace/executeCommand":
		var p struct {
			Command       string            `json:"command"`
			Arguments     []json.RawMessage `json:"arguments"`
			WorkDoneToken json.RawMessage   `json:"workDoneToken"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return nil, &rpcError{Code: -32602, Message: err.Error()}
		}
		return s.command(ctx, p.Command, p.Arguments, p.WorkDoneToken)
	}
	return nil, &rpcError{Code: -32601, Message: "method not found: " + m.Method}
}

func (s *server) codeActions(params json.RawMessage) any {
	var p struct {
		Context struct {
			Only []string `json:"only"`
		} `json:"context"`
	}
	_ = json.Unmarshal(params, &p)
	s.mu.Lock()
	turns := s.turns
	s.mu.Unlock()
	actions := []any{}
	if turns == 0 {
		return actions
	}
	const kind = "source.compactContext"
	match := len(p.Context.Only) == 0
	for _, o := range p.Context.Only {
		if o == kind || strings.HasPrefix(kind, o+".") {
			match = true
		}
	}
	if match {
		actions = append(actions, map[string]any{
			"title": "Compact context",
			"kind":  kind,
			"command": map[string]any{
				"title": "Compact context", "command": "reika.compact", "arguments": []any{},
			},
		})
	}
	return actions
}

func (s *server) command(ctx context.Context, name string, args []json.RawMessage, token json.RawMessage) (any, *rpcError) {
	switch name {
	case "reika.ask":
		if len(args) != 1 {
			return nil, &rpcError{Code: -32602, Message: "reika.ask: want one argument"}
		}
		var a struct {
			Prompt string `json:"prompt"`
			URI    string `json:"uri"`
			Range  *struct {
				Start struct{ Line, Character int } `json:"start"`
				End   struct{ Line, Character int } `json:"end"`
			} `json:"range"`
		}
		if err := json.Unmarshal(args[0], &a); err != nil {
			return nil, &rpcError{Code: -32602, Message: "reika.ask: " + err.Error()}
		}
		text := a.Prompt
		if a.Range != nil {
			text += fmt.Sprintf("\n[selection %s %d:%d-%d:%d]", filepath.Base(a.URI),
				a.Range.Start.Line, a.Range.Start.Character, a.Range.End.Line, a.Range.End.Character)
		}
		return s.ask(ctx, text, token), nil
	case "reika.compact":
		return s.compact(), nil
	case "reika.cancel":
		s.mu.Lock()
		cancel := s.turnCancel
		s.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		return map[string]any{"cancelled": cancel != nil}, nil
	case "reika.status":
		return s.status(), nil
	case "reika.save":
		var a struct {
			Path string `json:"path"`
		}
		if len(args) > 0 {
			if err := json.Unmarshal(args[0], &a); err != nil {
				return nil, &rpcError{Code: -32602, Message: "reika.save: want an object: " + err.Error()}
			}
		}
		path, err := s.save(a.Path)
		if err != nil {
			return nil, &rpcError{Code: -32603, Message: err.Error()}
		}
		return map[string]any{"path": path}, nil
	case "reika.newSession":
		s.mu.Lock()
		s.session++
		s.turns = 0
		s.size = 1200
		s.warned = false
		id := s.sessionIDLocked()
		s.mu.Unlock()
		s.sendStatus()
		return map[string]any{"session": id}, nil
	}
	return nil, &rpcError{Code: -32602, Message: "unknown command " + name}
}

func (s *server) sessionIDLocked() string { return fmt.Sprintf("s%d", s.session) }

func (s *server) status() status {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, sp := window, shedPoint
	pct := (s.size*100 + shedPoint/2) / shedPoint
	level := "ok"
	if pct >= 80 {
		level = "warning"
	}
	docs := make([]string, 0, len(s.openDocs))
	for d := range s.openDocs {
		docs = append(docs, filepath.Base(d))
	}
	settings := string(s.settings)
	if settings == "" {
		settings = "(none)"
	}
	return status{
		Text:         fmt.Sprintf("ctx %s/16k (%d%% of 13k)", chipSize(s.size), pct),
		Tooltip:      fmt.Sprintf("window 16000 (setting)\nsettings: %s\nopen: %s", settings, strings.Join(docs, ",")),
		Level:        level,
		Busy:         s.busy,
		Size:         s.size,
		Window:       &w,
		ShedPoint:    &sp,
		Percent:      &pct,
		WindowSource: "setting",
		Model:        s.model,
		Session:      s.sessionIDLocked(),
	}
}

func chipSize(n int) string {
	switch {
	case n >= 10000:
		return fmt.Sprintf("%dk", (n+500)/1000)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return strconv.Itoa(n)
}

func (s *server) sendStatus() { s.notify("reika/status", s.status()) }

func (s *server) emit(ev event) {
	s.mu.Lock()
	ev.Session = s.sessionIDLocked()
	if !ev.Delta {
		s.events = append(s.events, ev)
	}
	s.mu.Unlock()
	s.notify("reika/transcript", ev)
}

func (s *server) progress(token json.RawMessage, value map[string]any) {
	s.notify("$/progress", map[string]any{"token": token, "value": value})
}

func (s *server) ask(ctx context.Context, prompt string, token json.RawMessage) map[string]any {
	if strings.Contains(prompt, "[crash]") {
		os.Exit(3)
	}
	s.mu.Lock()
	if s.turnCancel != nil {
		s.mu.Unlock()
		return map[string]any{"session": s.sessionID(), "status": "error", "message": "a turn is already running: wait for it to end or cancel it (reika.cancel)"}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.turnCancel = cancel
	s.turns++
	turn := s.turns
	s.busy = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.turnCancel = nil
		s.busy = false
		s.mu.Unlock()
		s.sendStatus()
	}()

	if len(token) == 0 || string(token) == "null" {
		s.mu.Lock()
		token = json.RawMessage(strconv.Quote(fmt.Sprintf("double-%d", turn)))
		s.mu.Unlock()
		if _, err := s.call("window/workDoneProgress/create", map[string]any{"token": token}); err != nil {
			logf("%v", err)
		}
	}
	s.progress(token, map[string]any{"kind": "begin", "title": "Reika", "message": firstLine(prompt), "cancellable": true})
	defer s.progress(token, map[string]any{"kind": "end"})
	s.sendStatus()
	s.emit(event{Turn: turn, Round: 1, Kind: "user", Text: prompt})

	if strings.Contains(prompt, "[wait]") {
		select {
		case <-ctx.Done():
		case <-time.After(60 * time.Second): // a hang guard
		}
	}
	if ctx.Err() != nil {
		s.emit(event{Turn: turn, Round: 1, Kind: "info", Text: "Turn cancelled"})
		return map[string]any{"session": s.sessionID(), "status": "cancelled"}
	}

	for _, chunk := range []string{"Let me read ", "the file."} {
		s.emit(event{Turn: turn, Round: 1, Kind: "assistant", Text: chunk, Delta: true})
	}
	s.emit(event{Turn: turn, Round: 1, Kind: "assistant", Text: "Let me read the file."})
	if strings.Contains(prompt, "[approve]") {
		answer := "no answer"
		resp, err := s.call("window/showMessageRequest", map[string]any{
			"type":    3,
			"message": "Allow bash: go test ./...?",
			"actions": []map[string]string{{"title": "Allow"}, {"title": "Allow for this session"}, {"title": "Deny"}},
		})
		if err != nil {
			answer = err.Error()
		} else {
			var item *struct {
				Title string `json:"title"`
			}
			if json.Unmarshal(resp.Result, &item) == nil && item != nil {
				answer = item.Title
			}
		}
		s.emit(event{Turn: turn, Round: 1, Kind: "info", Text: "approval: " + answer})
	}
	if _, edit, ok := strings.Cut(prompt, "[applyedit]"); ok {
		s.emit(event{Turn: turn, Round: 1, Kind: "info", Text: "applyEdit: " + s.applyEdit(edit)})
	}
	s.emit(event{Turn: turn, Round: 1, Kind: "tool_call", Tool: "read", Args: json.RawMessage(`{"path":"big.txt"}`)})
	s.emit(event{Turn: turn, Round: 1, Kind: "tool_result", Tool: "read",
		Text: "big.txt lines 1-400 of 400\n1\tline one\n2\tline two\n3\tline three\n4\tline four", Tokens: 9800})
	s.mu.Lock()
	s.size = 11000
	warn := !s.warned
	s.warned = true
	s.mu.Unlock()
	s.sendStatus()
	if warn {
		s.notify("window/showMessage", map[string]any{"type": 2, "message": "Context at 88% of the shed point"})
	}
	s.progress(token, map[string]any{"kind": "report", "message": "round 1 · read big.txt · ctx 11k/16k (88% of 13k)"})
	s.emit(event{Turn: turn, Round: 2, Kind: "assistant", Text: "The file holds 400 numbered lines."})
	return map[string]any{"session": s.sessionID(), "status": "done"}
}

// applyEdit sends workspace/applyEdit with edit (a WorkspaceEdit as JSON
// text) and returns the client's answer as JSON text, or what went wrong.
func (s *server) applyEdit(edit string) string {
	if !json.Valid([]byte(edit)) {
		return "not JSON: " + edit
	}
	resp, err := s.call("workspace/applyEdit", map[string]any{
		"label": "Reika: write (double)",
		"edit":  json.RawMessage(edit),
	})
	if err != nil {
		return err.Error()
	}
	return string(resp.Result)
}

func (s *server) sessionID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessionIDLocked()
}

func (s *server) compact() map[string]any {
	s.mu.Lock()
	turns := s.turns
	s.mu.Unlock()
	if turns == 0 {
		msg := "Nothing to fold"
		s.notify("window/showMessage", map[string]any{"type": 3, "message": msg})
		return map[string]any{"folded": false, "message": msg}
	}
	msg := fmt.Sprintf("Folded %d round%s into a 1.3k-token recap", turns, plural(turns))
	s.emit(event{Turn: turns, Kind: "note", Text: "Established: big.txt holds 400 numbered lines."})
	s.emit(event{Turn: turns, Kind: "fold", Text: msg, Tokens: 1300})
	s.mu.Lock()
	s.size = 2600
	s.warned = false
	s.mu.Unlock()
	s.sendStatus()
	s.notify("window/showMessage", map[string]any{"type": 3, "message": msg})
	return map[string]any{"folded": true, "recapTokens": 1300, "message": msg}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func (s *server) save(path string) (string, error) {
	s.mu.Lock()
	events := append([]event(nil), s.events...)
	id := s.sessionIDLocked()
	s.mu.Unlock()
	if path == "" {
		path = filepath.Join(os.TempDir(), "reika-double-"+id+".md")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Session %s\n", id)
	for _, ev := range events {
		fmt.Fprintf(&b, "\n## %s (turn %d, round %d)\n\n%s\n", ev.Kind, ev.Turn, ev.Round, ev.Text)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return "", err
	}
	return path, nil
}
