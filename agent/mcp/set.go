package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// Timeouts: a server has ConnectTimeout to start, answer the handshake and
// list its tools; a call has CallTimeout. Both stop what they wait for and
// report it; the session goes on.
const (
	ConnectTimeout = 30 * time.Second
	CallTimeout    = 120 * time.Second
)

// Options configure a Set.
type Options struct {
	// ConnectTimeout and CallTimeout replace the defaults when positive.
	ConnectTimeout time.Duration
	CallTimeout    time.Duration
	// Environ is the environment a stdio server starts with, before its
	// own env; nil means os.Environ.
	Environ func() []string
	// Logf writes a log line; nil discards.
	Logf func(format string, args ...any)
	// OnDown is told, once, when a connected server stops (it died, or its
	// connection broke); nil ignores it.
	OnDown func(server, why string)
}

// Set is the connected servers of one agent. Its methods are safe for
// concurrent use.
type Set struct {
	opts Options

	mu    sync.Mutex
	conns []*conn // in the order the servers were given
}

// conn is one server: connected, or why not.
type conn struct {
	srv  Server
	sess *sdk.ClientSession // nil when it never connected
	stop func()             // ends the server's processes
	// guarded by Set.mu:
	tools   []*sdk.Tool // as last listed, by name
	err     error       // why it did not start, or why it stopped
	changed bool        // it said its tools changed since they were listed
}

// NewSet is a set with no servers.
func NewSet(opts Options) *Set {
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = ConnectTimeout
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = CallTimeout
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	return &Set{opts: opts}
}

// Start connects to servers, all at once, and lists their tools; it
// returns when each has answered, failed or timed out. A server that
// fails is kept with its error (see Status) and offers no tools.
func (s *Set) Start(ctx context.Context, servers []Server) {
	conns := make([]*conn, len(servers))
	var wg sync.WaitGroup
	for i, srv := range servers {
		conns[i] = &conn{srv: srv}
		wg.Go(func() { s.connect(ctx, conns[i]) })
	}
	wg.Wait()
	s.mu.Lock()
	s.conns = append(s.conns, conns...)
	s.mu.Unlock()
}

// connect starts one server and lists its tools within the connect
// timeout.
func (s *Set) connect(ctx context.Context, c *conn) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.ConnectTimeout)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "reika-lsp", Version: "1"}, &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			s.mu.Lock()
			c.changed = true
			s.mu.Unlock()
		},
	})
	t, stop, stderr, err := s.transport(c.srv)
	if err == nil {
		c.stop = stop
		c.sess, err = client.Connect(ctx, t, nil)
	}
	var list []*sdk.Tool
	if err == nil {
		list, err = listTools(ctx, c.sess)
	}
	if err != nil {
		err = connectError(ctx, err, s.opts.ConnectTimeout, stderr)
		s.opts.Logf("reika: MCP server %s (%s) did not start: %v", c.srv.Name, c.srv.Describe(), err)
		c.close()
		s.mu.Lock()
		c.err = err
		s.mu.Unlock()
		return
	}
	s.mu.Lock()
	c.tools = list
	s.mu.Unlock()
	go s.watch(c, stderr)
}

// connectError says why a server did not start: the timeout, or the error
// with what the server wrote to stderr.
func connectError(ctx context.Context, err error, timeout time.Duration, stderr *tail) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %s", timeout)
	}
	if t := stderr.String(); t != "" {
		err = fmt.Errorf("%w; it wrote: %s", err, t)
	}
	return err
}

// watch reports a connected server that stops.
func (s *Set) watch(c *conn, stderr *tail) {
	werr := c.sess.Wait()
	s.mu.Lock()
	closing := c.err != nil
	if !closing {
		why := "its connection ended"
		if werr != nil {
			why = fmt.Sprintf("its connection ended: %v", werr)
		}
		if t := stderr.String(); t != "" {
			why += "; it wrote: " + t
		}
		c.err = errors.New(why)
	}
	why := c.err.Error()
	s.mu.Unlock()
	if closing {
		return
	}
	s.opts.Logf("reika: MCP server %s stopped: %s", c.srv.Name, why)
	if s.opts.OnDown != nil {
		s.opts.OnDown(c.srv.Name, why)
	}
}

// listTools lists every page of the server's tools, sorted by name.
func listTools(ctx context.Context, sess *sdk.ClientSession) ([]*sdk.Tool, error) {
	var list []*sdk.Tool
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		list = append(list, t)
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	return list, nil
}

// transport is how to reach the server, and how to end its processes.
func (s *Set) transport(srv Server) (sdk.Transport, func(), *tail, error) {
	stderr := &tail{}
	if srv.Type == TypeHTTP {
		client := &http.Client{Transport: headerTransport{headers: srv.Headers, base: http.DefaultTransport}}
		return &sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: client, MaxRetries: -1}, func() {}, stderr, nil
	}
	cmd := stdioCommand(srv, s.opts.Environ())
	cmd.Stderr = stderr
	stop := func() { endProcess(cmd) }
	return &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, stop, stderr, nil
}

// headerTransport adds a server's configured headers to every request.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h.headers {
			r.Header.Set(k, v)
		}
	}
	return h.base.RoundTrip(r)
}

// close ends the connection and the server's processes.
func (c *conn) close() {
	if c.sess != nil {
		c.sess.Close()
	}
	if c.stop != nil {
		c.stop()
	}
}

// Close stops every server.
func (s *Set) Close() {
	s.mu.Lock()
	conns := s.conns
	for _, c := range conns {
		if c.err == nil {
			c.err = errors.New("closed")
		}
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(c.close)
	}
	wg.Wait()
}

// call runs one call of t within the call timeout, or until ctx ends.
func (s *Set) call(ctx context.Context, t *Tool, args json.RawMessage) ctxwin.Result {
	name := t.Spec.Name
	c := s.find(t.Server)
	if c == nil || c.sess == nil {
		return errorResult(name, "the MCP server %s is not connected", t.Server)
	}
	s.mu.Lock()
	down := c.err
	s.mu.Unlock()
	if down != nil {
		return errorResult(name, "the MCP server %s is not running (%v)", t.Server, down)
	}
	cctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
	defer cancel()
	res, err := c.sess.CallTool(cctx, &sdk.CallToolParams{Name: t.Orig, Arguments: args})
	switch {
	case err == nil:
		return toResult(name, string(args), res)
	case ctx.Err() != nil:
		return errorResult(name, "cancelled by the user")
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		s.opts.Logf("reika: MCP server %s: %s gave no answer within %s", t.Server, t.Orig, s.opts.CallTimeout)
		return errorResult(name, "the MCP server %s gave no answer within %s", t.Server, s.opts.CallTimeout)
	}
	return errorResult(name, "%v", err)
}

func (s *Set) find(server string) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		if c.srv.Name == server {
			return c
		}
	}
	return nil
}

// Refresh lists again the tools of every running server that said its
// tools changed. It reports whether a list changed.
func (s *Set) Refresh(ctx context.Context) bool {
	s.mu.Lock()
	var stale []*conn
	for _, c := range s.conns {
		if c.changed && c.err == nil {
			c.changed = false
			stale = append(stale, c)
		}
	}
	s.mu.Unlock()
	changed := false
	for _, c := range stale {
		lctx, cancel := context.WithTimeout(ctx, s.opts.ConnectTimeout)
		list, err := listTools(lctx, c.sess)
		cancel()
		if err != nil {
			s.opts.Logf("reika: MCP server %s: listing its changed tools: %v; keeping the old list", c.srv.Name, err)
			continue
		}
		s.mu.Lock()
		if !slices.EqualFunc(list, c.tools, sameTool) {
			c.tools, changed = list, true
		}
		s.mu.Unlock()
	}
	return changed
}

func sameTool(a, b *sdk.Tool) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
