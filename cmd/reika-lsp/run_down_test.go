package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// freePort is a loopback address nothing listens on (yet).
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// firstUserMessages are the user messages of srv's first request, joined
// by "|".
func firstUserMessages(t *testing.T, srv *enginetest.Server) string {
	t.Helper()
	recs := srv.Requests()
	if len(recs) == 0 {
		t.Fatal("no request")
	}
	var users []string
	for _, m := range recs[0].Request.Messages {
		if m.Role == ctxwin.RoleUser {
			users = append(users, m.Content)
		}
	}
	return strings.Join(users, "|")
}

// typedWhileDown runs `run "TYPED WHILE DOWN"` with the engine down (and
// no wait), which must fail saying the prompt is kept, then brings the
// engine up at the same address, answering "done". It returns what the
// next runs take: the binary, their directory and environment, and the
// engine.
func typedWhileDown(t *testing.T) (bin, dir string, env []string, srv *enginetest.Server) {
	t.Helper()
	bin = binary(t)
	addr := freePort(t)
	dir = t.TempDir()
	env = append(isolated(t, "http://"+addr+"/v1"), "REIKA_ENGINE_RETRY=0")
	first := exec.Command(bin, "run", "TYPED WHILE DOWN")
	first.Dir, first.Env = dir, env
	out, err := first.CombinedOutput()
	if code := first.ProcessState.ExitCode(); code != 1 || !strings.Contains(string(out), "the prompt is kept in session") {
		t.Fatalf("run with the engine down: exit %d (%v)\n%s", code, err, out)
	}
	srv, err = enginetest.Listen(enginetest.Options{Window: 16000, Script: enginetest.Sequence(enginetest.Text("done"))}, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return bin, dir, env, srv
}

// TestRunContinueCarriesThePromptTypedWhileTheEngineWasDown: `run` with
// the engine down (and no wait) fails, saying the prompt is kept; `run
// --continue` once the engine is up sends it to the engine before the new
// one, and does not call the window it learns then a change.
func TestRunContinueCarriesThePromptTypedWhileTheEngineWasDown(t *testing.T) {
	bin, dir, env, srv := typedWhileDown(t)
	second := exec.Command(bin, "run", "--continue", "and now")
	second.Dir, second.Env = dir, env
	out, err := second.CombinedOutput()
	if err != nil {
		t.Fatalf("run --continue: %v\n%s", err, out)
	}
	// The session began with no window known: the engine's first answer
	// gives it one, which is not a change of the settings.
	if strings.Contains(string(out), "context window 0 →") {
		t.Errorf("run --continue reports the first window known as a change:\n%s", out)
	}
	if users := firstUserMessages(t, srv); users != "TYPED WHILE DOWN|and now" {
		t.Errorf("the user messages sent: %q", users)
	}
}

// TestRunWaitsForTheEngine: `run` with the engine down waits for it,
// saying so once, and answers when it comes up.
func TestRunWaitsForTheEngine(t *testing.T) {
	bin := binary(t)
	addr := freePort(t)
	cmd := exec.Command(bin, "run", "hello")
	cmd.Dir, cmd.Env = t.TempDir(), isolated(t, "http://"+addr+"/v1")
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute) // hang guard
	for !strings.Contains(stderr.String(), "engine unreachable, retrying") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("run does not say it waits:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	srv, err := enginetest.Listen(enginetest.Options{Window: 16000, Script: enginetest.Sequence(enginetest.Text("here I am"))}, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "here I am") {
		t.Errorf("stdout: %q", stdout.String())
	}
	if n := strings.Count(stderr.String(), "engine unreachable, retrying"); n != 1 {
		t.Errorf("the wait is said %d times, want once:\n%s", n, stderr.String())
	}
}

// TestRunSaysASkippedRecordOnce: a garbage line in the middle of the log
// is skipped on --continue, and run says so once (the warning reaches the
// log, which run prints; it used to print the notice as well).
func TestRunSaysASkippedRecordOnce(t *testing.T) {
	bin := binary(t)
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: enginetest.Sequence(enginetest.Text("one"), enginetest.Text("two"))})
	defer srv.Close()
	dir := t.TempDir()
	env := isolated(t, srv.URL())
	runIn := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"run"}, args...)...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("run %q: %v\n%s", args, err, out)
		}
		return string(out)
	}
	runIn("first")
	state := strings.TrimPrefix(env[1], "XDG_STATE_HOME=")
	logs, _ := filepath.Glob(filepath.Join(state, "reika", "sessions", "*", "*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("logs: %v", logs)
	}
	b, err := os.ReadFile(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	first, rest, ok := strings.Cut(string(b), "\n")
	if !ok || rest == "" {
		t.Fatalf("a log of one line:\n%s", b)
	}
	if err := os.WriteFile(logs[0], []byte(first+"\n{garbage\n"+rest), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := runIn("--continue", "second"); strings.Count(out, "skipped 1 line(s) of its log") != 1 {
		t.Errorf("run --continue says the skipped line %d times:\n%s", strings.Count(out, "skipped 1 line(s) of its log"), out)
	}
}

// TestRunContinueAloneRetriesThePrompt: `run --continue` with no prompt
// sends the prompt the engine never answered again, as it was, and says
// so; with nothing to retry it says that.
func TestRunContinueAloneRetriesThePrompt(t *testing.T) {
	bin, dir, env, srv := typedWhileDown(t)
	retry := exec.Command(bin, "run", "--continue")
	retry.Dir, retry.Env = dir, env
	out, err := retry.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Retrying the last prompt") || !strings.Contains(string(out), "done") {
		t.Fatalf("run --continue alone: %v\n%s", err, out)
	}
	if users := firstUserMessages(t, srv); users != "TYPED WHILE DOWN" {
		t.Errorf("the user messages sent: %q", users)
	}
	again := exec.Command(bin, "run", "--continue")
	again.Dir, again.Env = dir, env
	out, _ = again.CombinedOutput()
	if again.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "nothing to retry") {
		t.Errorf("run --continue alone after the answer: exit %d\n%s", again.ProcessState.ExitCode(), out)
	}
}
