package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// These tests run the real binary: tools that cannot be turned against the
// user, and what the terminal shows.

// toolResults are the tool messages of the requests an engine answered.
func toolResults(srv *enginetest.Server) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range srv.Requests() {
		for _, m := range r.Request.Messages {
			if m.Role == ctxwin.RoleTool && !seen[m.ToolCallID] {
				seen[m.ToolCallID] = true
				out = append(out, m.Content)
			}
		}
	}
	return out
}

// TestRunKeepsTheKeyFromCommands gives the key to reika-lsp under the
// variable apiKeyEnv names (the config file names another in a second
// profile, and REIKA_API_KEY holds a third): a command sees none of them,
// neither in its environment nor in its parent's /proc/$PPID/environ.
func TestRunKeepsTheKeyFromCommands(t *testing.T) {
	bin := binary(t)
	const key = "sk-llm-key-0123456789"
	srv := enginetest.New(enginetest.Options{Window: 16000, APIKey: key, Script: enginetest.Sequence(
		enginetest.Call("bash", `{"command":"env; echo ---; tr '\\0' '\\n' < /proc/$PPID/environ"}`),
		enginetest.Text("done"),
	)})
	defer srv.Close()
	env := isolated(t, srv.URL())
	config := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_CONFIG_HOME="); ok {
			config = filepath.Join(v, "reika", "config.toml")
		}
	}
	os.MkdirAll(filepath.Dir(config), 0o700)
	os.WriteFile(config, []byte("[profiles.default]\napiKeyEnv = \"MY_LLM_KEY\"\n\n[profiles.other]\napiKeyEnv = \"OTHER_KEY\"\n"), 0o600)
	env = append(env, "MY_LLM_KEY="+key, "OTHER_KEY=sk-other-key-0123456789", "REIKA_API_KEY=sk-reika-key-0123456789",
		"COPY_OF_THE_KEY="+key, "VISIBLE_VAR=still-here")
	cmd := exec.Command(bin, "run", "--approve", "all", "show the environment")
	cmd.Dir, cmd.Env = t.TempDir(), env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	results := toolResults(srv)
	if len(results) != 1 {
		t.Fatalf("tool results %q", results)
	}
	own, parent, ok := strings.Cut(results[0], "---\n")
	if !ok || !strings.Contains(own, "VISIBLE_VAR=still-here") || !strings.Contains(parent, "VISIBLE_VAR=still-here") {
		t.Fatalf("the command did not read both environments:\n%s", results[0])
	}
	for _, secret := range []string{key, "sk-other-key-0123456789", "sk-reika-key-0123456789"} {
		if strings.Contains(results[0], secret) || bytes.Contains(out, []byte(secret)) {
			t.Errorf("a command saw %q:\n%s", secret, results[0])
		}
	}
}

// TestRunApproveEditsCannotRunCommands gives `run --approve edits` a model
// that writes core.fsmonitor into .git/config and reads a FIFO: the write
// needs a command's approval, which nobody can give here, and the read is
// refused at once instead of blocking.
func TestRunApproveEditsCannotRunCommands(t *testing.T) {
	bin := binary(t)
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".git"), 0o755)
	os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n"), 0o644)
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: enginetest.Sequence(
		enginetest.Call("write", `{"path":".git/config","content":"[core]\n\tfsmonitor = touch pwned\n"}`),
		enginetest.Call("read", `{"path":"fifo"}`),
		enginetest.Call("write", `{"path":"notes.txt","content":"an edit\n"}`),
		enginetest.Text("done"),
	)})
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--approve", "edits", "configure git")
	cmd.Dir, cmd.Env = root, isolated(t, srv.URL())
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the run hung:\n%s", out)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(root, ".git", "config")); string(b) != "[core]\n" {
		t.Errorf(".git/config was written with --approve edits: %q", b)
	}
	results := toolResults(srv)
	if len(results) != 3 || !strings.Contains(results[0], "version-control directory") || !strings.Contains(results[0], "denied") ||
		!strings.Contains(results[1], "is a named pipe (FIFO), not a regular file") || !strings.HasPrefix(results[2], "Wrote notes.txt") {
		t.Errorf("tool results %q", results)
	}
}

// brokenStream breaks the stream of the first reply after a few words;
// the engine client asks again and gets the whole reply.
func brokenStream() enginetest.Script {
	n := 0
	return func(r *enginetest.Request) enginetest.Reply {
		n++
		if n == 1 {
			reply := enginetest.Text("A broken first attempt that stops somewhere in the middle of it.")
			reply.Fault = enginetest.Fault{Truncate: true, AfterChunks: 2}
			return reply
		}
		return enginetest.Text("The real answer, whole.")
	}
}

// TestRunShowsTheReplyAfterARetriedStream breaks the stream of a reply:
// `reika-lsp run` ends with the real answer, not the broken text. On a
// pipe the broken text stays, marked, above the answer; on a terminal it
// is erased and the answer takes its place.
func TestRunShowsTheReplyAfterARetriedStream(t *testing.T) {
	bin := binary(t)
	t.Run("pipe", func(t *testing.T) {
		srv := enginetest.New(enginetest.Options{Window: 16000, Script: brokenStream()})
		defer srv.Close()
		cmd := exec.Command(bin, "run", "hi")
		cmd.Dir, cmd.Env = t.TempDir(), isolated(t, srv.URL())
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		want := "A broken first \n· (the reply above broke off; it is asked for again)\nThe real answer, whole.\n"
		if stdout.String() != want {
			t.Errorf("stdout:\n%q\nwant\n%q", stdout.String(), want)
		}
	})
	t.Run("terminal", func(t *testing.T) {
		if _, err := exec.LookPath("script"); err != nil {
			t.Skip("no script command to run under a terminal")
		}
		srv := enginetest.New(enginetest.Options{Window: 16000, Script: brokenStream()})
		defer srv.Close()
		cmd := exec.Command("script", "-qec", "stty cols 80 rows 24; exec "+bin+" run hi 2>/dev/null", "/dev/null")
		cmd.Dir, cmd.Env = t.TempDir(), isolated(t, srv.URL())
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v\n%q", err, out)
		}
		// The broken text; the engine's retry line (on stderr, here
		// /dev/null) ends it with a newline; then the erase (up to the
		// broken text's line, back to its start, clear to the end of the
		// screen) and the answer.
		want := "A broken first \r\n\x1b[1A\r\x1b[JThe real answer, whole.\r\n"
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("the terminal got %q, want it to contain %q", out, want)
		}
	})
}

// TestServeRefusesAPromptLargerThanTheWindow asks with a prompt of 8 MB in
// a 16k window: refused with a clear error, nothing sent to the engine and
// nothing logged; the session goes on.
func TestServeRefusesAPromptLargerThanTheWindow(t *testing.T) {
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: readingScript(nil, nil)})
	defer srv.Close()
	home := t.TempDir()
	p := startServerWith(t, serverOptions{env: []string{"REIKA_BASE_URL=" + srv.URL()}, home: home}, "serve")
	p.initialize()
	if res := p.ask("RESUME a small one"); res.Status != "done" {
		t.Fatalf("%+v", res)
	}
	before := len(srv.Requests())
	res := p.ask(strings.Repeat("a large prompt ", 8<<20/15))
	if res.Status != "error" || !strings.Contains(res.Message, "more than the 16000-token context window can hold") {
		t.Errorf("%+v", res)
	}
	if len(srv.Requests()) != before {
		t.Error("the prompt reached the engine")
	}
	if res := p.ask("RESUME after it"); res.Status != "done" {
		t.Errorf("%+v", res)
	}
	p.shutdown()
	for _, path := range stateLogs(t, []string{"XDG_STATE_HOME=" + home + "/state"}) {
		if fi, _ := os.Stat(path); fi.Size() > 1<<20 {
			t.Errorf("the log holds %d bytes", fi.Size())
		}
	}
}
