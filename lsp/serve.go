package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"go.lsp.dev/jsonrpc2"

	"github.com/reika-lsp/reika-lsp/agent"
)

// Config is what Serve needs from its caller.
type Config struct {
	// NewAgent builds the workspace's agent once the client has sent
	// initialized (or, with a client that never does, on the first command).
	// Serve fills Workspace, Approver, Events, Settings and Logf of opts; the
	// caller adds the Model (and StateDir, if not the default). When the
	// editor's settings change later, Serve calls Service.UpdateSettings, not
	// NewAgent; it calls NewAgent again only when an earlier call failed.
	NewAgent func(opts agent.Options) (agent.Service, error)
	// Logf writes a log line to stderr, never stdout. nil discards.
	Logf func(format string, args ...any)
	// Version is the server version reported in initialize's serverInfo.
	Version string
	// Exit ends the process with the status the LSP specification gives for
	// the exit notification: 0 when shutdown came first, 1 otherwise. nil
	// means os.Exit. When Exit returns (an in-process test), Serve closes the
	// connection and returns.
	Exit func(code int)
	// Getenv and ConfigFile are passed to agent.LoadSettings; nil and ""
	// mean the process environment and the default config file.
	Getenv     func(string) (string, bool)
	ConfigFile string
	// StateDir is where bug reports go, under reports/ (internal/bug); ""
	// means agent.StateDir(), the agent's default.
	StateDir string
}

// Errors Serve returns.
var (
	// ErrNoShutdown: the connection ended, or the client sent exit, without
	// a shutdown request first. The process should exit with status 1.
	ErrNoShutdown = errors.New("lsp: the client ended the session without a shutdown request")
)

// Serve runs the language server on rwc (the client's end: stdin and
// stdout, or a pipe in tests) until the connection ends or the client sends
// exit. It returns nil when the client sent shutdown before leaving,
// ErrNoShutdown when it did not, and the connection's error when it broke.
// Every goroutine Serve starts has ended when it returns.
//
// Serve closes rwc before it returns; it returns only once a pending read
// on rwc has been unblocked by that close (true of pipes and sockets; a
// read on os.Stdin is not, which is why the exit notification ends the
// process through Config.Exit instead).
func Serve(ctx context.Context, rwc io.ReadWriteCloser, cfg Config) error {
	s := newServer(cfg)
	s.stream = newStream(rwc, s.logf)
	handler, cancel := jsonrpc2.CancelHandler(s.handle)
	s.conn = jsonrpc2.NewConn(s.stream,
		jsonrpc2.WithCodec(codec{}),
		jsonrpc2.WithPreempter(cancelPreempter{cancel: cancel, logf: s.logf}),
	)
	// The conn's context must outlive shutdown: the read loop stops at the
	// first frame after it is cancelled, and exit comes after shutdown.
	s.conn.Go(s.bg, handler)

	var err error
	select {
	case <-s.conn.Done():
		err = s.conn.Err()
	case <-s.stream.readFailed:
	case <-s.exited:
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.stopLife()
	s.closeAgent()
	if cerr := s.conn.Close(); cerr != nil {
		s.logf("lsp: closing the connection: %v", cerr)
	}
	if err == nil {
		err = s.conn.Err()
	}
	s.wg.Wait()
	if err == nil && !s.shutdownSeen.Load() {
		err = ErrNoShutdown
	}
	return err
}

// server is one connection's state.
type server struct {
	cfg    Config
	logf   func(format string, args ...any)
	conn   jsonrpc2.Conn
	stream *stream
	docs   *documents

	// bg is the context of notifications and of the conn: never cancelled.
	bg context.Context
	// life is cancelled by shutdown, exit and the end of the connection. It
	// is the parent of every turn and of every call to the client, so that
	// nothing waits on a client that has left.
	life     context.Context
	stopLife context.CancelFunc
	// wg tracks the server's own goroutines (agent construction, turns,
	// configuration pulls, progress creation).
	wg sync.WaitGroup

	shutdownSeen atomic.Bool
	exitOnce     sync.Once
	exited       chan struct{} // closed after the exit notification
	ready        chan struct{} // closed when the first NewAgent call returned
	configMu     sync.Mutex    // serializes applying editor settings
	statusMu     sync.Mutex    // serializes status notifications
	lastStatus   []byte        // guarded by statusMu
	progressSeq  atomic.Int64
	notifyFailed atomic.Bool

	mu sync.Mutex // guards the fields below
	// initialized is set once initialize has been answered.
	initialized bool
	caps        clientCaps
	root        string
	rootURI     string
	// initSettings is the "reika" object of initializationOptions;
	// editorSettings the editor's settings now (initSettings until the
	// configuration changes).
	initSettings, editorSettings json.RawMessage
	agentStarted                 bool
	svc                          agent.Service // nil until built, and after shutdown
	svcErr                       error         // why svc is nil
	debug                        bool
	running                      *turn // the running turn, if any (turn.go)
	configGen                    int
}

// clientCaps is what the server uses of the client's capabilities.
type clientCaps struct {
	applyEdit          bool // workspace/applyEdit
	documentChanges    bool // versioned edits in WorkspaceEdit.documentChanges
	createFiles        bool // CreateFile in documentChanges
	workDoneProgress   bool // window/workDoneProgress/create
	showMessageRequest bool // window/showMessageRequest
}

func newServer(cfg Config) *server {
	logf := cfg.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if cfg.Exit == nil {
		cfg.Exit = os.Exit
	}
	s := &server{
		cfg:    cfg,
		logf:   logf,
		docs:   newDocuments(logf),
		bg:     context.Background(),
		exited: make(chan struct{}),
		ready:  make(chan struct{}),
	}
	s.life, s.stopLife = context.WithCancel(s.bg)
	return s
}

// goTracked runs f in a goroutine Serve waits for.
func (s *server) goTracked(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

// notify sends a notification; a failure is logged (once: after the
// connection is gone every send fails the same way).
func (s *server) notify(method string, params any) {
	if err := s.conn.Notify(s.bg, method, params); err != nil && !s.notifyFailed.Swap(true) {
		s.logf("lsp: sending %s: %v (further send failures are not logged)", method, err)
	}
}

// notifyJSON sends a notification whose params are v encoded with
// encoding/json.
func (s *server) notifyJSON(method string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.logf("lsp: encoding %s: %v", method, err)
		return
	}
	s.notify(method, json.RawMessage(b))
}

// call sends a request to the client and waits for its answer, giving up
// when ctx is done or the server is shutting down; then it tells the client
// with $/cancelRequest.
func (s *server) call(ctx context.Context, method string, params, result any) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.life, cancel)
	defer stop()
	id, err := s.conn.Call(ctx, method, params, result)
	if ctx.Err() != nil && id.IsValid() {
		idJSON, _ := json.Marshal(idValue(id))
		s.notify("$/cancelRequest", json.RawMessage(`{"id":`+string(idJSON)+`}`))
	}
	return err
}

// idValue is the JSON value of a request id.
func idValue(id jsonrpc2.ID) any {
	if n, ok := id.Number(); ok {
		return n
	}
	str, _ := id.StringValue()
	return str
}
