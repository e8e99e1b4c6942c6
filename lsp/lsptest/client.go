// Package lsptest is a scriptable LSP client for tests of the language
// server: in-process over a pipe, or against the reika-lsp binary over its
// stdin and stdout. It records every notification the server sends, in
// order, answers the server's requests through hooks, and can write raw
// bytes between frames to test the server's framing.
package lsptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// Message is a notification or request the server sent.
type Message struct {
	Method string
	Params json.RawMessage
}

// Hooks answer the server's requests. A nil hook gives the default answer.
// Hooks run on their own goroutine, so they may block (to test what the
// server does while waiting for the client).
type Hooks struct {
	// ApplyEdit answers workspace/applyEdit; default {"applied": true}.
	ApplyEdit func(params json.RawMessage) (any, error)
	// ShowMessageRequest answers window/showMessageRequest; default null
	// (the user dismissed it).
	ShowMessageRequest func(params json.RawMessage) (any, error)
	// Configuration answers workspace/configuration; default [null].
	Configuration func(params json.RawMessage) (any, error)
	// WorkDoneProgressCreate answers window/workDoneProgress/create;
	// default success.
	WorkDoneProgressCreate func(params json.RawMessage) error
}

// Client is one LSP client connection.
type Client struct {
	conn  jsonrpc2.Conn
	rwc   *lockedRWC
	hooks Hooks

	mu        sync.Mutex
	notes     []Message     // guarded by mu
	requests  []Message     // guarded by mu
	responses []Response    // guarded by mu
	changed   chan struct{} // closed and replaced when anything arrives; guarded by mu
}

// Response is a response the server sent.
type Response struct {
	ID     jsonrpc2.ID // the zero ID for a null id
	Result json.RawMessage
	Err    *jsonrpc2.Error
}

// Connect starts a client on rwc (the client's end of the connection).
func Connect(rwc io.ReadWriteCloser, hooks Hooks) *Client {
	c := &Client{rwc: &lockedRWC{rwc: rwc}, hooks: hooks, changed: make(chan struct{})}
	c.conn = jsonrpc2.NewConn(&recordingStream{Stream: jsonrpc2.NewHeaderStream(c.rwc), c: c})
	c.conn.Go(context.Background(), c.handle)
	return c
}

// Pipe returns the two ends of an in-memory connection: one for the
// server, one for Connect.
func Pipe() (server, client io.ReadWriteCloser) {
	return net.Pipe()
}

func (c *Client) handle(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	// The request borrows the read buffer: copy what is kept.
	m := Message{Method: strings.Clone(req.Method()), Params: append(json.RawMessage(nil), req.Params()...)}
	c.record(func() {
		if req.IsCall() {
			c.requests = append(c.requests, m)
		} else {
			c.notes = append(c.notes, m)
		}
	})
	if !req.IsCall() {
		return nil, nil
	}
	jsonrpc2.Async(ctx)
	return c.answer(m)
}

func (c *Client) answer(m Message) (any, error) {
	switch m.Method {
	case "workspace/applyEdit":
		if c.hooks.ApplyEdit != nil {
			return raw(c.hooks.ApplyEdit(m.Params))
		}
		return json.RawMessage(`{"applied":true}`), nil
	case "window/showMessageRequest":
		if c.hooks.ShowMessageRequest != nil {
			return raw(c.hooks.ShowMessageRequest(m.Params))
		}
		return json.RawMessage("null"), nil
	case "workspace/configuration":
		if c.hooks.Configuration != nil {
			return raw(c.hooks.Configuration(m.Params))
		}
		return json.RawMessage("[null]"), nil
	case "window/workDoneProgress/create":
		if c.hooks.WorkDoneProgressCreate != nil {
			if err := c.hooks.WorkDoneProgressCreate(m.Params); err != nil {
				return nil, err
			}
		}
		return json.RawMessage("null"), nil
	}
	return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "the test client does not handle %s", m.Method)
}

// raw encodes a hook's result with encoding/json.
func raw(v any, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	if r, ok := v.(json.RawMessage); ok {
		return r, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(b), nil
}

// Call sends a request. params and result use encoding/json; result may be
// nil, or a *json.RawMessage to get the result as sent.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	p, err := encode(params)
	if err != nil {
		return err
	}
	var out json.RawMessage
	if _, err := c.conn.Call(ctx, method, p, &out); err != nil {
		return err
	}
	if result == nil {
		return nil
	}
	if r, ok := result.(*json.RawMessage); ok {
		*r = out
		return nil
	}
	return json.Unmarshal(out, result)
}

// record runs f under the lock and wakes the waiters.
func (c *Client) record(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f()
	close(c.changed)
	c.changed = make(chan struct{})
}

// Go sends a request in the background; the channel gets Call's error.
func (c *Client) Go(ctx context.Context, method string, params, result any) (done <-chan error) {
	ch := make(chan error, 1)
	go func() { ch <- c.Call(ctx, method, params, result) }()
	return ch
}

// Notify sends a notification.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	p, err := encode(params)
	if err != nil {
		return err
	}
	return c.conn.Notify(ctx, method, p)
}

func encode(v any) (jsonrpc2.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	if r, ok := v.(json.RawMessage); ok {
		return jsonrpc2.RawMessage(r), nil
	}
	b, err := json.Marshal(v)
	return jsonrpc2.RawMessage(b), err
}

// Command runs workspace/executeCommand. args nil sends no arguments.
func (c *Client) Command(ctx context.Context, command string, args []any, result any) error {
	params := map[string]any{"command": command}
	if args != nil {
		params["arguments"] = args
	}
	return c.Call(ctx, "workspace/executeCommand", params, result)
}

// Send writes a request with the given id (an int64 or a string) and
// returns without waiting; WaitResponse gets the answer. It is for tests
// that need to know a request's id, such as cancellation.
func (c *Client) Send(id any, method string, params any) error {
	var rid jsonrpc2.ID
	switch v := id.(type) {
	case int64:
		rid = jsonrpc2.NewNumberID(v)
	case int:
		rid = jsonrpc2.NewNumberID(int64(v))
	case string:
		rid = jsonrpc2.NewStringID(v)
	default:
		return fmt.Errorf("lsptest: id %v: want an int64 or a string", id)
	}
	p, err := encode(params)
	if err != nil {
		return err
	}
	return c.WriteFrame(jsonrpc2.AppendCall(nil, rid, method, p))
}

// WriteFrame writes body as one frame with a correct Content-Length.
func (c *Client) WriteFrame(body []byte) error {
	return c.WriteRaw(append(fmt.Appendf(nil, "Content-Length: %d\r\n\r\n", len(body)), body...))
}

// WaitResponse waits for the response with the given id (an int64, int or
// string; nil for a response with a null id) and returns it.
func (c *Client) WaitResponse(ctx context.Context, id any) (Response, error) {
	var want jsonrpc2.ID
	switch v := id.(type) {
	case nil:
	case int64:
		want = jsonrpc2.NewNumberID(v)
	case int:
		want = jsonrpc2.NewNumberID(int64(v))
	case string:
		want = jsonrpc2.NewStringID(v)
	default:
		return Response{}, fmt.Errorf("lsptest: id %v: want an int64 or a string", id)
	}
	var found Response
	err := c.Wait(ctx, func([]Message, []Message) bool {
		for _, r := range c.responses {
			if r.ID == want {
				found = r
				return true
			}
		}
		return false
	})
	return found, err
}

// Responses returns every response the server sent so far, in order.
func (c *Client) Responses() []Response {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.responses)
}

// WriteRaw writes bytes to the server between whole frames.
func (c *Client) WriteRaw(b []byte) error {
	_, err := c.rwc.Write(b)
	return err
}

// Notes returns the notifications received so far with the given method
// ("" for all), in order.
func (c *Client) Notes(method string) []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return filter(c.notes, method)
}

// Requests returns the requests the server sent so far with the given
// method ("" for all), in order.
func (c *Client) Requests(method string) []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return filter(c.requests, method)
}

func filter(ms []Message, method string) []Message {
	if method == "" {
		return slices.Clone(ms)
	}
	var out []Message
	for _, m := range ms {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// Wait blocks until cond holds for the notifications and requests received
// so far (each in order), or ctx is done.
func (c *Client) Wait(ctx context.Context, cond func(notes, requests []Message) bool) error {
	for {
		c.mu.Lock()
		ok := cond(c.notes, c.requests)
		ch := c.changed
		c.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for the server: %w", ctx.Err())
		}
	}
}

// WaitNote waits for a notification with the method for which match
// (nil: any) returns true, and returns it.
func (c *Client) WaitNote(ctx context.Context, method string, match func(Message) bool) (Message, error) {
	var found Message
	err := c.Wait(ctx, func(notes, _ []Message) bool {
		for _, m := range notes {
			if m.Method == method && (match == nil || match(m)) {
				found = m
				return true
			}
		}
		return false
	})
	return found, err
}

// Done is closed when the connection has ended.
func (c *Client) Done() <-chan struct{} { return c.conn.Done() }

// Disconnect drops the connection at once, as a client that crashed: the
// server sees the end of its input. Calls still waiting fail.
func (c *Client) Disconnect() {
	c.rwc.Close()
	<-c.conn.Done()
}

// Close closes the connection after the calls in flight have been
// answered.
func (c *Client) Close() error {
	err := c.conn.Close()
	if errors.Is(err, io.ErrClosedPipe) {
		return nil
	}
	return err
}

// recordingStream records each response before the conn matches it to a
// call (the conn drops responses to requests it did not send).
type recordingStream struct {
	jsonrpc2.Stream
	c *Client
}

func (r *recordingStream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	msg, n, err := r.Stream.Read(ctx)
	if resp, ok := msg.(*jsonrpc2.Response); ok && err == nil {
		rec := Response{ID: resp.ID(), Result: append(json.RawMessage(nil), resp.Result()...)}
		if resp.Err() != nil {
			var wire *jsonrpc2.Error
			if !errors.As(resp.Err(), &wire) {
				wire = jsonrpc2.NewError(0, resp.Err().Error())
			}
			rec.Err = wire
		}
		r.c.record(func() { r.c.responses = append(r.c.responses, rec) })
	}
	return msg, n, err
}

// lockedRWC serializes writes so that raw bytes never land inside a frame
// (the header stream writes each frame with one Write).
type lockedRWC struct {
	rwc io.ReadWriteCloser
	mu  sync.Mutex
}

func (l *lockedRWC) Read(p []byte) (int, error) { return l.rwc.Read(p) }

func (l *lockedRWC) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rwc.Write(p)
}

func (l *lockedRWC) Close() error { return l.rwc.Close() }
