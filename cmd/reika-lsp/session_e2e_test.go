package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/ctxwin"
	"github.com/reika-lsp/reika-lsp/lsp/lsptest"
)

// These tests run the real binary: sessions that survive kill -9, one
// owner per session log, a full disk, and an engine that comes up late.

// testSeed is the seed of the randomized tests: REIKA_TEST_SEED, else a
// fixed one. The tests log it.
func testSeed(t *testing.T) int64 {
	if s := os.Getenv("REIKA_TEST_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("REIKA_TEST_SEED: %v", err)
		}
		return n
	}
	return 17
}

// sourceFiles writes n small Go files under root/src and returns their
// workspace-relative paths.
func sourceFiles(t *testing.T, root string, n int) []string {
	t.Helper()
	os.MkdirAll(filepath.Join(root, "src"), 0o755)
	var files []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("src/file%02d.go", i)
		var b strings.Builder
		fmt.Fprintf(&b, "package src\n\n")
		for j := 0; j < 60; j++ {
			fmt.Fprintf(&b, "// F%d_%d does step %d of the work.\nfunc F%d_%d() int { return %d }\n\n", i, j, j, i, j, i*j)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
	}
	return files
}

// logRound is what these tests read of a session log line.
type logRound struct {
	Kind   string          `json:"t"`
	Prompt string          `json:"prompt"`
	Reply  *ctxwin.Message `json:"reply"`
}

// stateLogs lists the session logs under an isolated environment's state
// directory.
func stateLogs(t *testing.T, env []string) []string {
	t.Helper()
	var state string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_STATE_HOME="); ok {
			state = v
		}
	}
	logs, _ := filepath.Glob(filepath.Join(state, "reika", "sessions", "*", "*.jsonl"))
	return logs
}

// wholeReads are the files read by the rounds whole in a log's bytes.
func wholeReads(data []byte) []string {
	var out []string
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		var r logRound
		if !bytes.HasSuffix(line, []byte("\n")) || json.Unmarshal(line, &r) != nil || r.Kind != "round" || r.Reply == nil {
			continue
		}
		for _, c := range r.Reply.ToolCalls {
			var args struct{ Path string }
			json.Unmarshal([]byte(c.Arguments), &args)
			out = append(out, args.Path)
		}
	}
	return out
}

// lastLog is the log of the session `last` names under an isolated
// environment's state directory.
func lastLog(t *testing.T, env []string) string {
	t.Helper()
	logs := stateLogs(t, env)
	if len(logs) == 0 {
		t.Fatal("no session log")
	}
	dir := filepath.Dir(logs[0])
	last, err := os.ReadFile(filepath.Join(dir, "last"))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, strings.TrimSpace(string(last))+".jsonl")
}

// parseLog reads a session log; every line must be a whole record.
func parseLog(t *testing.T, path string) []logRound {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []logRound
	for i, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r logRound
		if line[len(line)-1] != '\n' || json.Unmarshal(line, &r) != nil {
			t.Fatalf("%s: line %d is not a whole record: %.100q", path, i+1, line)
		}
		recs = append(recs, r)
	}
	return recs
}

// readsLogged are the files the rounds of a log read, and the prompts of
// its turns.
func readsLogged(t *testing.T, path string) (reads map[string]bool, prompts []string) {
	t.Helper()
	reads = map[string]bool{}
	for _, r := range parseLog(t, path) {
		switch {
		case r.Kind == "turn":
			prompts = append(prompts, r.Prompt)
		case r.Kind == "round" && r.Reply != nil:
			for _, c := range r.Reply.ToolCalls {
				var args struct{ Path string }
				json.Unmarshal([]byte(c.Arguments), &args)
				reads[args.Path] = true
			}
		}
	}
	return reads, prompts
}

// readingScript reads files in order, one a round, then answers; a turn
// whose prompt starts with RESUME is answered at once. It calls reached
// with the number of each reading request.
func readingScript(files []string, reached func(int)) enginetest.Script {
	var mu sync.Mutex
	n := 0
	return func(r *enginetest.Request) enginetest.Reply {
		mu.Lock()
		defer mu.Unlock()
		// The newest message but what a shrink event appended after it (a
		// shrink at a turn's start appends after its prompt).
		last := r.Messages[len(r.Messages)-1]
		for i := len(r.Messages) - 1; i > 0 && ctxwin.IsAside(last); i-- {
			last = r.Messages[i-1]
		}
		switch {
		case r.ToolChoice == "none":
			return enginetest.Text("NOTE: reading the files in order")
		case last.Role == ctxwin.RoleUser && strings.HasPrefix(last.Content, "RESUME "):
			return enginetest.Text("answered " + last.Content)
		case n >= len(files):
			return enginetest.Text("read them all")
		}
		n++
		if reached != nil {
			reached(n)
		}
		return enginetest.Call("read", fmt.Sprintf(`{"path":%q}`, files[n-1]))
	}
}

// TestRunKilledAt50Points kills `reika-lsp run` with SIGKILL at 50 random
// points (8 under -short) of a scripted session that reads, sheds and folds (every other
// time also tearing the log at a random byte, as a kill mid-write or a
// full disk does), and resumes each twice with `run --continue`: every
// round whose next request reached the engine before the kill (or that is
// whole before the tear) is in the log after each resume, every line of
// the log is a whole record, and both resumed turns are there.
func TestRunKilledAt50Points(t *testing.T) {
	bin := binary(t)
	root := t.TempDir()
	files := sourceFiles(t, root, 24)
	seed := testSeed(t)
	rng := rand.New(rand.NewSource(seed))
	t.Logf("seed %d", seed)
	srv := enginetest.New(enginetest.Options{Window: 16000})
	defer srv.Close()
	kills, points := 0, 50
	if testing.Short() {
		points = 8 // the inner loop (README): fewer kills, the same checks
	}
	for i := 0; i < points; i++ {
		at := 1 + rng.Intn(len(files)+1) // the reading request that starts the countdown
		delay := time.Duration(rng.Intn(4000)) * time.Microsecond
		reached := make(chan struct{})
		var once sync.Once
		srv.SetScript(readingScript(files, func(n int) {
			if n == at {
				once.Do(func() { close(reached) })
			}
		}))
		env := isolated(t, srv.URL())
		before := len(srv.Requests())
		cmd := exec.Command(bin, "run", "--approve", "all", "read every file in order")
		cmd.Dir, cmd.Env = root, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waited := make(chan error, 1)
		go func() { waited <- cmd.Wait() }()
		select {
		case <-reached:
			time.Sleep(delay) // where the kill lands, not a measurement
			cmd.Process.Kill()
			<-waited
			kills++
		case err := <-waited: // the session ended before the countdown
			if err != nil {
				t.Fatalf("point %d: the run failed: %v\n%s", i, err, out.String())
			}
		case <-time.After(hangGuard):
			cmd.Process.Kill()
			t.Fatalf("point %d: the run hung:\n%s", i, out.String())
		}
		// Request k reached the engine only after round k-1 was logged.
		requests := 0
		for _, r := range srv.Requests()[before:] {
			if r.Path == "/v1/chat/completions" && r.Request.ToolChoice != "none" {
				requests++
			}
		}
		completed := files[:max(requests-1, 0)]
		if i%2 == 1 && len(completed) > 0 {
			// And a torn write: the log cut at a random byte, as a crash
			// in the middle of a write or a full disk leaves it. What
			// must survive is every round whole before the cut.
			path := lastLog(t, env)
			data, _ := os.ReadFile(path)
			first := bytes.IndexByte(data, '\n') + 1
			off := first + rng.Intn(len(data)-first)
			if err := os.WriteFile(path, data[:off], 0o600); err != nil {
				t.Fatal(err)
			}
			completed = wholeReads(data[:off])
		}

		for n, prompt := range []string{"RESUME one", "RESUME two"} {
			c := exec.Command(bin, "run", "--approve", "all", "--continue", prompt)
			c.Dir, c.Env = root, env
			if b, err := c.CombinedOutput(); err != nil || !bytes.Contains(b, []byte("answered "+prompt)) {
				t.Fatalf("point %d (request %d + %v): resume %d: %v\n%s", i, at, delay, n+1, err, b)
			}
			logs := stateLogs(t, env)
			if len(logs) != 1 && len(completed) > 0 {
				t.Fatalf("point %d: resume %d left %d session logs", i, n+1, len(logs))
			}
			reads, prompts := readsLogged(t, lastLog(t, env))
			for _, f := range completed {
				if !reads[f] {
					t.Fatalf("point %d (request %d + %v, %d requests): after resume %d the log lacks the round that read %s",
						i, at, delay, requests, n+1, f)
				}
			}
			if got := strings.Join(prompts[len(prompts)-n-1:], "|"); got != strings.Join([]string{"RESUME one", "RESUME two"}[:n+1], "|") {
				t.Fatalf("point %d: after resume %d the turns end with %q", i, n+1, prompts)
			}
		}
	}
	t.Logf("%d of %d runs killed mid-session", kills, points)
	if kills < points/2 {
		t.Errorf("only %d runs were killed before they ended", kills)
	}
}

// askResult is the result of reika.ask.
type askResult struct {
	Session, Status, Message string
}

// ask sends reika.ask and returns its result.
func (p *proc) ask(prompt string) askResult {
	p.t.Helper()
	var res askResult
	if err := p.c.Command(p.ctx, "reika.ask", []any{map[string]any{"prompt": prompt}}, &res); err != nil {
		p.t.Fatalf("reika.ask %q: %v", prompt, err)
	}
	return res
}

// shutdown ends the server as an editor does.
func (p *proc) shutdown() {
	p.t.Helper()
	if err := p.c.Call(p.ctx, "shutdown", nil, nil); err != nil {
		p.t.Fatalf("shutdown: %v", err)
	}
	p.c.Notify(p.ctx, "exit", nil)
	if code := p.exitCode(); code != 0 {
		p.t.Errorf("exit status %d", code)
	}
}

// showMessages are the window/showMessage texts the server sent.
func (p *proc) showMessages() []string {
	var out []string
	for _, m := range p.c.Notes("window/showMessage") {
		var v struct{ Message string }
		json.Unmarshal(m.Params, &v)
		out = append(out, v.Message)
	}
	return out
}

// TestTwoServersOnOneWorkspace opens one workspace in two servers, as two
// editor windows on one folder do: the first resumes the last session,
// the second says it is in use and starts its own, and the turns of each
// are in its own log only.
func TestTwoServersOnOneWorkspace(t *testing.T) {
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: readingScript(nil, nil)})
	defer srv.Close()
	home, root := t.TempDir(), t.TempDir()
	env := []string{"REIKA_BASE_URL=" + srv.URL(), "REIKA_APPROVE=all"}
	first := startServerWith(t, serverOptions{env: env, home: home, root: root}, "serve")
	first.initialize()
	old := first.ask("RESUME the first turn")
	if old.Status != "done" {
		t.Fatalf("first ask: %+v", old)
	}
	first.shutdown()

	a := startServerWith(t, serverOptions{env: env, home: home, root: root}, "serve")
	a.initialize()
	b := startServerWith(t, serverOptions{env: env, home: home, root: root}, "serve")
	b.initialize()
	if _, err := b.c.WaitNote(b.ctx, "window/showMessage", func(m lsptest.Message) bool {
		return strings.Contains(string(m.Params), "open in another reika-lsp")
	}); err != nil {
		t.Fatalf("the second server did not say the session is in use: %v; messages %q", err, b.showMessages())
	}
	var wg sync.WaitGroup
	results := make([][]askResult, 2)
	for i, p := range []*proc{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 5 {
				results[i] = append(results[i], p.ask(fmt.Sprintf("RESUME window %d ask %d", i, n)))
			}
		}()
	}
	wg.Wait()
	if results[0][0].Session != old.Session || results[1][0].Session == old.Session {
		t.Errorf("sessions: first window %s, second %s, the old one %s", results[0][0].Session, results[1][0].Session, old.Session)
	}
	a.shutdown()
	b.shutdown()
	env2 := []string{"XDG_STATE_HOME=" + home + "/state"}
	logs := stateLogs(t, env2)
	if len(logs) != 2 {
		t.Fatalf("%d session logs, want 2", len(logs))
	}
	for _, path := range logs {
		_, prompts := readsLogged(t, path)
		windows := map[string]bool{}
		for _, p := range prompts {
			if w, _, ok := strings.Cut(strings.TrimPrefix(p, "RESUME "), " ask"); ok {
				windows[w] = true
			}
		}
		if len(windows) > 1 {
			t.Errorf("%s holds the turns of both windows: %q", filepath.Base(path), prompts)
		}
	}
}

// TestTwoRunContinueOnOneWorkspace runs `run --continue` while another
// holds the session: the second says so, runs its turn in a session of its
// own and exits 0; neither log holds the other's turn.
func TestTwoRunContinueOnOneWorkspace(t *testing.T) {
	bin := binary(t)
	root := t.TempDir()
	files := sourceFiles(t, root, 3)
	held := make(chan struct{})
	var once sync.Once
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: func(r *enginetest.Request) enginetest.Reply {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == ctxwin.RoleUser && last.Content == "RESUME first":
			return enginetest.Call("read", fmt.Sprintf(`{"path":%q}`, files[0]))
		case last.Role == ctxwin.RoleTool:
			once.Do(func() { close(held) })
			return enginetest.Reply{Content: "first done", Fault: enginetest.Fault{FirstByteDelay: time.Minute}}
		}
		return enginetest.Text("answered " + last.Content)
	}})
	defer srv.Close()
	env := isolated(t, srv.URL())
	if b, err := runIn(bin, root, env, "RESUME start"); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}

	first := exec.Command(bin, "run", "--approve", "all", "--continue", "RESUME first")
	first.Dir, first.Env = root, env
	var out1 syncBuffer
	first.Stdout, first.Stderr = &out1, &out1
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer first.Process.Kill()
	select {
	case <-held:
	case <-time.After(hangGuard):
		t.Fatalf("the first run never got to its second round:\n%s", out1.String())
	}
	b, err := runIn(bin, root, env, "RESUME second")
	if err != nil || !strings.Contains(string(b), "answered RESUME second") || !strings.Contains(string(b), "open in another reika-lsp") {
		t.Fatalf("the second run: %v\n%s", err, b)
	}
	first.Process.Signal(os.Interrupt) // end the held request: the first run is cancelled
	waited := make(chan error, 1)
	go func() { waited <- first.Wait() }()
	select {
	case <-waited:
	case <-time.After(hangGuard):
		first.Process.Kill()
		<-waited
		t.Errorf("the first run did not stop on SIGINT:\n%s", out1.String())
	}
	var owners []string
	for _, path := range stateLogs(t, env) {
		_, prompts := readsLogged(t, path)
		joined := strings.Join(prompts, "|")
		if strings.Contains(joined, "RESUME first") && strings.Contains(joined, "RESUME second") {
			t.Errorf("%s holds both runs' turns: %q", filepath.Base(path), prompts)
		}
		owners = append(owners, joined)
	}
	if len(owners) != 2 {
		t.Errorf("%d session logs, want 2: %q", len(owners), owners)
	}
}

// runIn runs `reika-lsp run --approve all --continue prompt` in root.
func runIn(bin, root string, env []string, prompt string) ([]byte, error) {
	c := exec.Command(bin, "run", "--approve", "all", "--continue", prompt)
	c.Dir, c.Env = root, env
	return c.CombinedOutput()
}

// TestRunOnAFullDisk runs a session whose state directory is a small
// filesystem: when the log can no longer be written the run stops with a
// clear error and exit status 1 before another round runs unrecorded, the
// log stays whole, and once there is room `run --continue` goes on with
// every round logged before the failure.
func TestRunOnAFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED: mounting a small filesystem needs root (the injected write error of agent's TestLogWriteFailureStopsTheTurn runs anyway)")
	}
	bin := binary(t)
	root := t.TempDir()
	files := sourceFiles(t, root, 40)
	state := t.TempDir()
	if b, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", state).CombinedOutput(); err != nil {
		t.Skipf("SKIPPED: cannot mount a small tmpfs: %v %s", err, b)
	}
	defer exec.Command("umount", state).Run()
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: readingScript(files, nil)})
	defer srv.Close()
	env := isolated(t, srv.URL())
	for i, kv := range env {
		if strings.HasPrefix(kv, "XDG_STATE_HOME=") {
			env[i] = "XDG_STATE_HOME=" + state
		}
	}
	cmd := exec.Command(bin, "run", "--approve", "all", "read every file in order")
	cmd.Dir, cmd.Env = root, env
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 1 || err == nil {
		t.Fatalf("exit status %d on a full disk, want 1:\n%s", code, out)
	}
	if !bytes.Contains(out, []byte("no space left on device")) || !bytes.Contains(out, []byte("the turn was stopped so that nothing runs unrecorded")) {
		t.Errorf("the run does not say why it stopped:\n%s", out)
	}
	path := lastLog(t, env)
	reads, _ := readsLogged(t, path) // every line whole
	requests := 0
	for _, r := range srv.Requests() {
		if r.Path == "/v1/chat/completions" && r.Request.ToolChoice != "none" {
			requests++
		}
	}
	if len(reads) < 3 || requests != len(reads)+1 {
		t.Errorf("%d requests for %d logged rounds: want exactly one round (the one whose log failed) past the log", requests, len(reads))
	}

	if b, err := exec.Command("mount", "-o", "remount,size=8m", state).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v %s", err, b)
	}
	if b, err := runIn(bin, root, env, "RESUME with room"); err != nil || !bytes.Contains(b, []byte("answered RESUME with room")) {
		t.Fatalf("run --continue with room: %v\n%s", err, b)
	}
	after, prompts := readsLogged(t, lastLog(t, env))
	for f := range reads {
		if !after[f] {
			t.Errorf("the round that read %s was lost", f)
		}
	}
	if prompts[len(prompts)-1] != "RESUME with room" {
		t.Errorf("turns %q", prompts)
	}
}

// statusNote is what these tests read of a reika/status notification.
type statusNote struct {
	Level, Session, WindowSource string
	Window                       *int
}

func decodeStatus(m lsptest.Message) statusNote {
	var s statusNote
	json.Unmarshal(m.Params, &s)
	return s
}

// TestServeResumesWhileTheEngineIsDown opens an editor on a workspace with
// a session before the engine is up: the server resumes the session at
// once, its status says the engine is unreachable, and when the engine
// comes up the status turns back to normal with the engine's window
// without an ask; the next ask continues the old session.
func TestServeResumesWhileTheEngineIsDown(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	first := enginetest.New(enginetest.Options{Window: 16000, Script: readingScript(nil, nil)})
	p := startServerWith(t, serverOptions{env: []string{"REIKA_BASE_URL=" + first.URL()}, home: home, root: root}, "serve")
	p.initialize()
	old := p.ask("RESUME before the restart")
	p.shutdown()
	first.Close()

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	p = startServerWith(t, serverOptions{env: []string{"REIKA_BASE_URL=http://" + addr + "/v1"}, home: home, root: root}, "serve")
	p.initialize()
	down, err := p.c.WaitNote(p.ctx, "reika/status", func(m lsptest.Message) bool { return decodeStatus(m).Level == "error" })
	if err != nil {
		t.Fatalf("no error status while the engine is down: %v", err)
	}
	if st := decodeStatus(down); st.Session != old.Session {
		t.Errorf("the status while the engine is down names session %q, want the resumed %q", st.Session, old.Session)
	}
	second, err := enginetest.Listen(enginetest.Options{Window: 12000, Script: readingScript(nil, nil)}, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	up, err := p.c.WaitNote(p.ctx, "reika/status", func(m lsptest.Message) bool {
		st := decodeStatus(m)
		return st.Level == "ok" && st.Window != nil && *st.Window == 12000
	})
	if err != nil {
		t.Fatalf("the status did not come back once the engine was up: %v", err)
	}
	if st := decodeStatus(up); st.Session != old.Session || st.WindowSource != "endpoint" {
		t.Errorf("status once the engine is up: %+v", st)
	}
	for _, r := range second.Requests() {
		if r.Path == "/v1/chat/completions" {
			t.Fatal("a chat request before any ask")
		}
	}
	if res := p.ask("RESUME after the engine came up"); res.Status != "done" || res.Session != old.Session {
		t.Errorf("ask once the engine is up: %+v", res)
	}
	p.shutdown()
}
