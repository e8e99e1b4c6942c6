package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/mcp/mcptest"
	"github.com/reika-lsp/reika-lsp/lsp"
	"github.com/reika-lsp/reika-lsp/lsp/lsptest"
)

// These tests drive the built binary over stdio, as an editor does.

// hangGuard bounds every wait; hitting it means the server hung.
const hangGuard = 20 * time.Second

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds reika-lsp once per test run (or uses $REIKA_LSP_BIN, as
// test.sh sets it).
func binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if p := os.Getenv("REIKA_LSP_BIN"); p != "" {
			binPath = p
			return
		}
		dir, err := os.MkdirTemp("", "reika-lsp-test-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "reika-lsp")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	mcptest.Remove()
	if binPath != "" && os.Getenv("REIKA_LSP_BIN") == "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// proc is the server process with a client on its stdio.
type proc struct {
	t      testing.TB
	cmd    *exec.Cmd
	c      *lsptest.Client
	stdin  io.WriteCloser
	stdout *bytes.Buffer // everything the server wrote to stdout; guarded by outMu
	outMu  sync.Mutex
	stderr *syncBuffer
	waited chan error
	ctx    context.Context
	root   string
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// teeReader copies what is read into a buffer (the test checks afterwards
// that stdout held nothing but frames).
type teeReader struct {
	r   io.Reader
	mu  *sync.Mutex
	buf *bytes.Buffer
}

func (t teeReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.mu.Lock()
	t.buf.Write(p[:n])
	t.mu.Unlock()
	return n, err
}

type pipes struct {
	io.Reader
	io.WriteCloser
}

// startServer starts the binary with args and a clean environment.
func startServer(t testing.TB, args ...string) *proc {
	t.Helper()
	return startServerWith(t, serverOptions{}, args...)
}

// serverOptions adjust startServerWith.
type serverOptions struct {
	// env is added to the clean environment ("KEY=value"), for example
	// REIKA_BASE_URL pointing at agent/enginetest.
	env []string
	// hooks answer the server's requests (approvals, edits...).
	hooks lsptest.Hooks
	// home and root are the server's home directory (its state and config
	// live below it) and workspace; "" means a fresh one each.
	home, root string
}

// startServerWith starts the binary with args, a clean environment (a
// fresh HOME and XDG directories, no REIKA_* variables) plus o.env, and a
// client with o.hooks.
func startServerWith(t testing.TB, o serverOptions, args ...string) *proc {
	t.Helper()
	before := goleak.IgnoreCurrent()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	home, root := o.home, o.root
	if home == "" {
		home = t.TempDir()
	}
	if root == "" {
		root = t.TempDir()
	}
	cmd := exec.Command(binary(t), args...)
	// No user settings leak in: a fresh home, no REIKA_* variables.
	cmd.Env = append([]string{"HOME=" + home, "XDG_CONFIG_HOME=" + home + "/config", "XDG_STATE_HOME=" + home + "/state", "PATH=" + os.Getenv("PATH")}, o.env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, stdin: stdin, stdout: &bytes.Buffer{}, stderr: &syncBuffer{}, waited: make(chan error, 1), ctx: ctx, root: root}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.c = lsptest.Connect(pipes{teeReader{out, &p.outMu, p.stdout}, stdin}, o.hooks)
	go func() { p.waited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		p.c.Disconnect()
		select {
		case err := <-p.waited:
			p.waited <- err
		case <-time.After(hangGuard):
			t.Error("the server process did not end")
		}
		cancel()
		if t.Failed() {
			t.Logf("server stderr:\n%s", p.stderr)
		}
		goleak.VerifyNone(t, before)
	})
	return p
}

// exitCode waits for the process to end and returns its status.
func (p *proc) exitCode() int {
	p.t.Helper()
	select {
	case err := <-p.waited:
		p.waited <- err
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			p.t.Fatalf("wait: %v", err)
		}
		return 0
	case <-p.ctx.Done():
		p.t.Fatal("the server did not exit")
	}
	return -1
}

func (p *proc) initialize() json.RawMessage {
	p.t.Helper()
	var res json.RawMessage
	err := p.c.Call(p.ctx, "initialize", map[string]any{
		"processId":    os.Getpid(),
		"rootUri":      "file://" + p.root,
		"capabilities": map[string]any{"window": map[string]any{"workDoneProgress": true}},
	}, &res)
	if err != nil {
		p.t.Fatalf("initialize: %v", err)
	}
	if err := p.c.Notify(p.ctx, "initialized", map[string]any{}); err != nil {
		p.t.Fatal(err)
	}
	return res
}

// checkStdoutIsFrames fails the test unless everything the server wrote to
// stdout is a sequence of well-formed LSP frames with JSON bodies.
func (p *proc) checkStdoutIsFrames() {
	p.t.Helper()
	select {
	case <-p.c.Done(): // the client has read everything
	case <-p.ctx.Done():
		p.t.Fatal("the client did not see the end of stdout")
	}
	p.outMu.Lock()
	b := bytes.Clone(p.stdout.Bytes())
	p.outMu.Unlock()
	for len(b) > 0 {
		const prefix = "Content-Length: "
		end := bytes.Index(b, []byte("\r\n\r\n"))
		if !bytes.HasPrefix(b, []byte(prefix)) || end < 0 {
			p.t.Fatalf("stdout holds something that is not a frame: %q", truncate(b, 200))
		}
		n, err := strconv.Atoi(string(b[len(prefix):end]))
		if err != nil || end+4+n > len(b) {
			p.t.Fatalf("bad frame header on stdout: %q", truncate(b, 200))
		}
		if body := b[end+4 : end+4+n]; !json.Valid(body) {
			p.t.Fatalf("frame body on stdout is not JSON: %q", truncate(body, 200))
		}
		b = b[end+4+n:]
	}
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

func TestServeLifecycle(t *testing.T) {
	p := startServer(t, "serve")
	res := p.initialize()
	var caps struct {
		Capabilities struct {
			ExecuteCommandProvider struct{ Commands []string }
			TextDocumentSync       struct{ Change int }
		}
	}
	json.Unmarshal(res, &caps)
	if len(caps.Capabilities.ExecuteCommandProvider.Commands) != len(lsp.Commands) || caps.Capabilities.TextDocumentSync.Change != 2 {
		t.Errorf("initialize result = %s", res)
	}
	if _, err := p.c.WaitNote(p.ctx, "reika/status", nil); err != nil {
		t.Fatalf("no status after initialized: %v", err)
	}
	var st agent.Status
	if err := p.c.Command(p.ctx, "reika.status", nil, &st); err != nil {
		t.Fatalf("reika.status: %v", err)
	}
	if !strings.HasPrefix(st.Text, "ctx") || (st.Level != "ok" && st.Level != "warning" && st.Level != "error") {
		t.Errorf("status = %+v", st)
	}
	if err := p.c.Call(p.ctx, "shutdown", nil, nil); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	p.c.Notify(p.ctx, "exit", nil)
	if code := p.exitCode(); code != 0 {
		t.Errorf("exit after shutdown: status %d, want 0", code)
	}
	p.checkStdoutIsFrames()
	if !strings.Contains(p.stderr.String(), "initialize from") {
		t.Errorf("stderr has no log: %q", p.stderr.String())
	}
}

func TestServeIsTheDefaultCommand(t *testing.T) {
	p := startServer(t)
	p.initialize()
	p.c.Call(p.ctx, "shutdown", nil, nil)
	p.c.Notify(p.ctx, "exit", nil)
	if code := p.exitCode(); code != 0 {
		t.Errorf("status %d, want 0", code)
	}
}

func TestServeExitStatus(t *testing.T) {
	t.Run("exit without shutdown", func(t *testing.T) {
		p := startServer(t)
		p.initialize()
		p.c.Notify(p.ctx, "exit", nil)
		if code := p.exitCode(); code != 1 {
			t.Errorf("status %d, want 1", code)
		}
	})
	t.Run("end of input without shutdown", func(t *testing.T) {
		p := startServer(t)
		p.initialize()
		p.stdin.Close()
		if code := p.exitCode(); code != 1 {
			t.Errorf("status %d, want 1", code)
		}
	})
	t.Run("end of input after shutdown", func(t *testing.T) {
		p := startServer(t)
		p.initialize()
		p.c.Call(p.ctx, "shutdown", nil, nil)
		p.stdin.Close()
		if code := p.exitCode(); code != 0 {
			t.Errorf("status %d, want 0", code)
		}
	})
	t.Run("exit before initialize", func(t *testing.T) {
		p := startServer(t)
		p.c.Notify(p.ctx, "exit", nil)
		if code := p.exitCode(); code != 1 {
			t.Errorf("status %d, want 1", code)
		}
	})
}

// Garbage on stdin does not stop the server answering.
func TestServeSurvivesMalformedInput(t *testing.T) {
	p := startServer(t)
	if err := p.c.Command(p.ctx, "reika.status", nil, nil); err == nil || !strings.Contains(err.Error(), "not initialized") {
		t.Errorf("request before initialize: %v", err)
	}
	p.initialize()
	for _, junk := range []string{
		"Content-Length: nope\r\n\r\n{}",
		"Content-Length: 2\r\n\r\n{]",
		"random text\n",
		"Content-Length: 39\r\n\r\n" + `{"jsonrpc":"2.0","id":1e999,"method":1}`,
	} {
		p.c.WriteRaw([]byte(junk))
	}
	p.c.WriteRaw([]byte("\r\n"))
	var st agent.Status
	if err := p.c.Command(p.ctx, "reika.status", nil, &st); err != nil || st.Text == "" {
		t.Errorf("reika.status after junk: %+v, %v", st, err)
	}
	p.c.Call(p.ctx, "shutdown", nil, nil)
	p.c.Notify(p.ctx, "exit", nil)
	if code := p.exitCode(); code != 0 {
		t.Errorf("status %d, want 0", code)
	}
	p.checkStdoutIsFrames()
}

func TestServeUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{{[]string{"serve", "-h"}, 0}, {[]string{"serve", "-nope"}, 2}, {[]string{"serve", "extra"}, 2}} {
		var stdout, stderr bytes.Buffer
		if code := dispatch(tc.args, &stdout, &stderr); code != tc.code {
			t.Errorf("%v: status %d, want %d", tc.args, code, tc.code)
		}
		if stdout.Len() != 0 || !strings.Contains(stderr.String(), "usage: reika-lsp [serve]") {
			t.Errorf("%v: stdout %q, stderr %q", tc.args, stdout.String(), stderr.String())
		}
	}
}

// BenchmarkStartupBinary measures the time from starting the process to
// initialize answered.
func BenchmarkStartupBinary(b *testing.B) {
	binary(b)
	for b.Loop() {
		p := startServer(b)
		p.initialize()
		b.StopTimer()
		p.c.Notify(p.ctx, "exit", nil)
		p.exitCode()
		b.StartTimer()
	}
}

// BenchmarkIdleRSSBinary reports the resident memory of an initialized,
// idle server process (its agent built, no engine to talk to).
func BenchmarkIdleRSSBinary(b *testing.B) {
	binary(b)
	for b.Loop() {
		p := startServer(b)
		p.initialize()
		if _, err := p.c.WaitNote(p.ctx, "reika/status", nil); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(procKB(b, p.cmd.Process.Pid, "VmRSS")), "rss-KB")
		p.c.Notify(p.ctx, "exit", nil)
		p.exitCode()
	}
}

// procKB reads a kB figure (VmRSS, VmHWM) of a process from /proc.
func procKB(b testing.TB, pid int, field string) int {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skip("no /proc:", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return kb
		}
	}
	return 0
}
