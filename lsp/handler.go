package lsp

import (
	"context"
	"encoding/json"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// The handler chain, built around go.lsp.dev/jsonrpc2 v1.0.1's defaults
// (docs/design.md §7):
//
//   - $/cancelRequest is answered by cancelPreempter on the read loop, ahead
//     of anything queued, and cancels the named request's context through
//     jsonrpc2.CancelHandler. Numeric and string ids both work.
//   - Notifications run inline on the read loop, in the order they arrive
//     (didOpen and didChange must apply in order). They never return an
//     error (a notification error ends the connection), never panic out
//     (a handler panic ends it too), and unknown ones are ignored. One that
//     needs to call the client (didChangeConfiguration) does so from its
//     own goroutine: calling the client from the read loop deadlocks.
//   - Requests release the read loop with jsonrpc2.Async before they do
//     anything slow, so a running turn never holds up other requests.
//     initialize does its work inline (nothing may overtake it) and is
//     released after. Every call is released, even one refused at once: see
//     handle.
//   - A request's method and params borrow the read buffer: what outlives
//     the release is copied.
//   - Errors are always *jsonrpc2.Error with a real code (a plain Go error
//     would go out with code 0); a cancelled request answers
//     RequestCancelled. errors.go builds them all.

// request is one request method.
type request struct {
	inline bool // run on the read loop (fast, and nothing may overtake it)
	call   func(s *server, ctx context.Context, params json.RawMessage) (any, error)
}

var requests = map[string]request{
	protocol.MethodInitialize:              {inline: true, call: (*server).initialize},
	protocol.MethodShutdown:                {call: (*server).shutdown},
	protocol.MethodWorkspaceExecuteCommand: {call: (*server).executeCommand},
	protocol.MethodTextDocumentCodeAction:  {call: (*server).codeAction},
}

var notifications = map[string]func(s *server, params json.RawMessage){
	protocol.MethodInitialized:                     (*server).initializedNote,
	protocol.MethodExit:                            (*server).exit,
	protocol.MethodTextDocumentDidOpen:             (*server).didOpen,
	protocol.MethodTextDocumentDidChange:           (*server).didChange,
	protocol.MethodTextDocumentDidClose:            (*server).didClose,
	protocol.MethodWorkspaceDidChangeConfiguration: (*server).didChangeConfiguration,
	protocol.MethodWindowWorkDoneProgressCancel:    (*server).progressCancel,
}

// handle is the conn's handler (inside jsonrpc2.CancelHandler).
func (s *server) handle(ctx context.Context, req *jsonrpc2.Request) (result any, err error) {
	// The request borrows the read buffer until it is released: keep a copy.
	method := strings.Clone(req.Method())
	defer func() {
		if r := recover(); r != nil {
			report := s.reportBug("handling "+method, r)
			result, err = nil, internalError("%s", report.Error())
			if !req.IsCall() {
				err = nil
			}
		}
	}()
	if s.isDebug() {
		s.logf("lsp: <- %s", method)
	}
	if !req.IsCall() {
		s.handleNotification(method, json.RawMessage(req.Params()))
		return nil, nil
	}
	// Every call is released with Async, inline ones after their work:
	// jsonrpc2.CancelHandler derives a context from the request's pooled
	// context, and the goroutine context.WithCancel starts to watch it may
	// call Done after the pool has recycled it — a panic. A released
	// request is never recycled.
	released := false
	release := func() {
		if !released {
			released = true
			jsonrpc2.Async(ctx)
		}
	}
	defer release()
	if err := s.gate(method); err != nil {
		return nil, err
	}
	r, ok := requests[method]
	if !ok {
		return nil, methodNotFound(method)
	}
	if !r.inline {
		release()
	}
	result, err = r.call(s, ctx, json.RawMessage(req.Params()))
	return result, wireError(ctx, err)
}

// gate refuses requests before initialize and after shutdown.
func (s *server) gate(method string) error {
	s.mu.Lock()
	initialized := s.initialized
	s.mu.Unlock()
	switch {
	case method == protocol.MethodInitialize:
		if initialized {
			return invalidRequest("initialize was already received")
		}
	case !initialized:
		return notInitialized(method)
	case s.shutdownSeen.Load():
		return invalidRequest("the server is shut down (got %s after shutdown)", method)
	}
	return nil
}

// handleNotification runs a notification inline. Before initialize and
// after shutdown only exit is taken; unknown notifications are ignored.
func (s *server) handleNotification(method string, params json.RawMessage) {
	f, ok := notifications[method]
	if !ok {
		if s.isDebug() {
			s.logf("lsp: ignoring notification %s", method)
		}
		return
	}
	if method != protocol.MethodExit {
		s.mu.Lock()
		initialized := s.initialized
		s.mu.Unlock()
		if !initialized || s.shutdownSeen.Load() {
			s.logf("lsp: dropping %s: the server is not initialized or is shut down", method)
			return
		}
	}
	f(s, params)
}

// cancelPreempter answers $/cancelRequest on the read loop, before the
// request it names could be queued behind anything.
type cancelPreempter struct {
	cancel func(jsonrpc2.ID)
	logf   func(string, ...any)
}

func (p cancelPreempter) Preempt(_ context.Context, req *jsonrpc2.Request) (any, error) {
	if req.Method() != protocol.MethodCancelRequest {
		return nil, jsonrpc2.ErrNotHandled
	}
	var params struct {
		ID json.RawMessage `json:"id"`
	}
	if err := decodeParams(req.Params(), &params); err != nil {
		p.logf("lsp: ignoring $/cancelRequest: %v", err)
		return true, nil
	}
	id, ok := parseID(params.ID)
	if !ok {
		p.logf("lsp: ignoring $/cancelRequest with id %s: want an integer or a string", truncate(string(params.ID), 64))
		return true, nil
	}
	p.cancel(id)
	return true, nil
}

func (s *server) isDebug() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.debug
}

// truncate shortens s to at most n bytes (on a character boundary), marking
// the cut with "…".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
