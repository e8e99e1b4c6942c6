// Package llamaserver runs a real llama.cpp llama-server for tests, with
// nothing installed on the system: Debian unstable's llama.cpp-tools and the
// libraries it needs are unpacked once per machine into the cache
// ($REIKA_CACHE_DIR/llama-server, by .ci/prepare-llama-server), and the
// server runs with that tree's own dynamic loader.
//
// Find locates the tree (fetching it when it is missing and apt-get is at
// hand); Start writes nothing itself but runs the server on 127.0.0.1 at a
// free port on a model the test wrote (package gguf makes them), waits until
// /health answers, captures the server's log, and stops it when the test
// ends, failed or not (the process also dies with the test binary). With
// REIKA_TEST_STRICT=1 a missing server fails the test; elsewhere the test is
// skipped with a notice.
package llamaserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Tree is an unpacked llama-server.
type Tree struct {
	// Root holds usr/bin/llama-server and its libraries.
	Root string
	// Version is what `llama-server --version` printed first, e.g.
	// "version: 0.7.0 (build 11669, commit Debian)".
	Version string
	// Packages lists the Debian packages unpacked, one "name version" a
	// line.
	Packages string
}

// CacheDir is where downloads the tests need are cached:
// $REIKA_CACHE_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/reika-lsp.
func CacheDir() string {
	if d := os.Getenv("REIKA_CACHE_DIR"); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return filepath.Join(os.TempDir(), "reika-lsp-cache")
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "reika-lsp")
}

// Strict reports whether a missing external tool fails the run
// (REIKA_TEST_STRICT=1, as .ci/run sets it).
func Strict() bool { return os.Getenv("REIKA_TEST_STRICT") == "1" }

var (
	findOnce sync.Once
	found    *Tree
	findErr  error
)

// Find returns the llama-server tree, fetching it on first use. When there
// is none, it fails t in strict mode and skips it otherwise.
//
// Under -short (the inner loop, README) it skips t. Under the race
// detector it skips t too: the tests against the real server
// drive whole sessions through it, which the detector slows several times
// (past the test timeout on two cores), and they run in the plain test run.
// The race run is for the agent's and the server's own goroutines.
func Find(t testing.TB) *Tree {
	t.Helper()
	if underRace {
		t.Skip("a real llama-server is not used under the race detector: its tests run in the plain test run")
	}
	if testing.Short() {
		t.Skip("a real llama-server is not used under -short (the inner loop): ./test.sh runs it")
	}
	findOnce.Do(func() {
		found, findErr = find()
		if findErr == nil {
			fmt.Fprintf(os.Stderr, "llamaserver: %s (%s)\n", found.Version, strings.ReplaceAll(strings.TrimSpace(found.Packages), "\n", ", "))
		}
	})
	if findErr != nil {
		if Strict() {
			t.Fatalf("llama-server is not available (required: REIKA_TEST_STRICT=1): %v", findErr)
		}
		t.Skipf("SKIPPED: llama-server is not available: %v (run .ci/prepare-llama-server)", findErr)
	}
	t.Logf("llama-server %s", found.Version)
	return found
}

func find() (*Tree, error) {
	dir := filepath.Join(CacheDir(), "llama-server")
	root := filepath.Join(dir, "root")
	if _, err := os.Stat(filepath.Join(root, "usr", "bin", "llama-server")); err != nil {
		if err := fetch(); err != nil {
			return nil, err
		}
	}
	tr := &Tree{Root: root}
	pk, _ := os.ReadFile(filepath.Join(dir, "versions"))
	tr.Packages = string(pk)
	cmd := tr.command(context.Background(), "--version")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s --version: %w: %s", tr.binary(), err, strings.TrimSpace(out.String()))
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "version:") {
			tr.Version = strings.TrimSpace(line)
			break
		}
	}
	if tr.Version == "" {
		tr.Version = strings.TrimSpace(out.String())
	}
	return tr, nil
}

// fetch runs .ci/prepare-llama-server from the module root, under a lock so
// that test binaries running at once fetch once.
func fetch() error {
	script, err := prepareScript()
	if err != nil {
		return err
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return errors.New("it is not in the cache and apt-get is not found to fetch it")
	}
	if err := os.MkdirAll(CacheDir(), 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(CacheDir(), "llama-server.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	cmd := exec.Command("bash", script)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", script, err, lastLines(out.String(), 5))
	}
	return nil
}

// prepareScript finds .ci/prepare-llama-server above the working directory.
func prepareScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, ".ci", "prepare-llama-server")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("it is not in the cache and .ci/prepare-llama-server is not found to fetch it")
		}
		dir = parent
	}
}

func (tr *Tree) binary() string { return filepath.Join(tr.Root, "usr", "bin", "llama-server") }

// command runs llama-server with the tree's loader and libraries and one
// CPU backend (without GGML_BACKEND_PATH it loads none).
func (tr *Tree) command(ctx context.Context, args ...string) *exec.Cmd {
	lib := filepath.Join(tr.Root, "usr", "lib", "x86_64-linux-gnu")
	loader := filepath.Join(lib, "ld-linux-x86-64.so.2")
	full := append([]string{"--library-path", lib + ":" + filepath.Join(lib, "llama"), tr.binary()}, args...)
	cmd := exec.CommandContext(ctx, loader, full...)
	cmd.Env = append(os.Environ(), "GGML_BACKEND_PATH="+filepath.Join(lib, "ggml", "backends0", "libggml-cpu-x64.so"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// Config is how to run one server.
type Config struct {
	// Model is the GGUF file to serve.
	Model string
	// Ctx is -c (0: the flag is left out, so the server takes the model's
	// training context).
	Ctx int
	// Parallel is -np (0: left out, the server picks).
	Parallel int
	// KVUnified adds -kvu.
	KVUnified bool
	// CacheReuse is --cache-reuse (0: left out).
	CacheReuse int
	// APIKey is --api-key ("": none).
	APIKey string
	// Alias is --alias ("": the file name).
	Alias string
	// HoldLoad starts the server with its model held back: every route
	// answers 503 "Loading model" until Release is called. (The model path
	// is a link to a FIFO while it is held: the server blocks opening it.)
	HoldLoad bool
	// Args are more flags.
	Args []string
}

// ToolCallerArgs are the flags the hand-wired tool caller needs: its
// attention scores must not be rounded to F16 (see gguf.ToolCaller).
var ToolCallerArgs = []string{"-ctk", "f32", "-ctv", "f32", "-fa", "off"}

// Server is a running llama-server.
type Server struct {
	t    testing.TB
	tree *Tree
	cfg  Config
	port int
	link string // the model path given to the server when HoldLoad

	mu   sync.Mutex
	cmd  *exec.Cmd
	log  *logBuffer
	done chan struct{}
	fifo string
	logs []string // logs of earlier runs (before a Restart)
}

// Start runs a server and waits until /health answers (with HoldLoad: until
// it listens and answers 503). The server stops when the test ends; its log
// is printed when the test failed.
func Start(t testing.TB, tree *Tree, cfg Config) *Server {
	t.Helper()
	s := &Server{t: t, tree: tree, cfg: cfg}
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("llama-server log:\n%s", s.Log())
		}
	})
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if s.port, err = freePort(); err != nil {
			t.Fatal(err)
		}
		if err = s.start(); err == nil {
			return s
		}
		if !strings.Contains(s.Log(), "bind") && !strings.Contains(s.Log(), "address already in use") {
			break
		}
	}
	t.Fatalf("starting llama-server: %v\n%s", err, s.Log())
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) args(model string) []string {
	c := s.cfg
	a := []string{"-m", model, "--host", "127.0.0.1", "--port", strconv.Itoa(s.port), "-t", "1", "-tb", "1", "--no-webui"}
	if c.Ctx > 0 {
		a = append(a, "-c", strconv.Itoa(c.Ctx))
	}
	if c.Parallel > 0 {
		a = append(a, "-np", strconv.Itoa(c.Parallel))
	}
	if c.KVUnified {
		a = append(a, "-kvu")
	}
	if c.CacheReuse > 0 {
		a = append(a, "--cache-reuse", strconv.Itoa(c.CacheReuse))
	}
	if c.APIKey != "" {
		a = append(a, "--api-key", c.APIKey)
	}
	if c.Alias != "" {
		a = append(a, "--alias", c.Alias)
	}
	return append(a, c.Args...)
}

func (s *Server) start() error {
	model := s.cfg.Model
	if s.cfg.HoldLoad {
		dir := s.t.TempDir()
		s.fifo = filepath.Join(dir, "held.fifo")
		if err := syscall.Mkfifo(s.fifo, 0o600); err != nil {
			return err
		}
		s.link = filepath.Join(dir, filepath.Base(s.cfg.Model))
		if err := os.Symlink(s.fifo, s.link); err != nil {
			return err
		}
		model = s.link
	}
	log := &logBuffer{}
	cmd := s.tree.command(context.Background(), s.args(model)...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	s.mu.Lock()
	s.cmd, s.log, s.done = cmd, log, done
	s.mu.Unlock()
	return s.waitHealth(s.cfg.HoldLoad)
}

// waitHealth waits until /health answers 200 (or 503 when loading is
// held), the process exits, or a minute passes.
func (s *Server) waitHealth(loading bool) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return errors.New("llama-server exited")
		default:
		}
		resp, err := http.Get(s.RootURL() + "/health")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK || loading && resp.StatusCode == http.StatusServiceUnavailable {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("llama-server did not answer /health within a minute")
}

// Release lets a server started with HoldLoad load its model, and waits
// until it has.
func (s *Server) Release() {
	s.t.Helper()
	// The server opens the model twice: first to fit its parameters to
	// the device memory (that open blocks on the FIFO; an empty FIFO makes
	// the fit fail, which the server logs and survives), then to load it,
	// by then through the link to the real file.
	if err := os.Remove(s.link); err != nil {
		s.t.Fatal(err)
	}
	model, err := filepath.Abs(s.cfg.Model)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := os.Symlink(model, s.link); err != nil {
		s.t.Fatal(err)
	}
	f, err := os.OpenFile(s.fifo, os.O_WRONLY, 0)
	if err != nil {
		s.t.Fatal(err)
	}
	f.Close()
	if err := s.waitHealth(false); err != nil {
		s.t.Fatalf("after Release: %v\n%s", err, s.Log())
	}
}

// Restart stops the server and starts it again on the same port with the
// same configuration (its prompt caches are gone).
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.mu.Lock()
	s.logs = append(s.logs, s.log.String())
	s.mu.Unlock()
	hold := s.cfg.HoldLoad
	s.cfg.HoldLoad = false
	defer func() { s.cfg.HoldLoad = hold }()
	if err := s.start(); err != nil {
		s.t.Fatalf("restarting llama-server: %v\n%s", err, s.Log())
	}
}

// Stop ends the server: SIGTERM to its process group, SIGKILL after five
// seconds. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	if s.fifo != "" {
		// A server blocked opening the FIFO ignores nothing, but be sure
		// it is not left waiting for a writer.
		if f, err := os.OpenFile(s.fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// URL is the OpenAI-compatible base URL, ending in /v1.
func (s *Server) URL() string { return s.RootURL() + "/v1" }

// RootURL is the server's root (where /health, /props and /slots are).
func (s *Server) RootURL() string { return "http://127.0.0.1:" + strconv.Itoa(s.port) }

// Port is the port the server listens on.
func (s *Server) Port() int { return s.port }

// Log is what the server printed, over all its runs.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, l := range s.logs {
		b.WriteString(l)
		b.WriteString("--- restarted ---\n")
	}
	if s.log != nil {
		b.WriteString(s.log.String())
	}
	return b.String()
}

// WaitLog waits until the server's log holds substr at least n times, or
// until timeout has passed, and returns how many times it holds it. The
// server's output reaches the log through a pipe, so a line the server
// printed before it answered may arrive after the answer.
func (s *Server) WaitLog(substr string, n int, timeout time.Duration) int {
	deadline := time.Now().Add(timeout)
	for {
		c := strings.Count(s.Log(), substr)
		if c >= n || time.Now().After(deadline) {
			return c
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// logBuffer collects the server's output.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}
