package tools

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// detached are commands that leave a process behind outside the command's
// process group, process tree or environment: each writes the survivor's
// pid to the file pid, then waits or ends.
var detached = map[string]string{
	"setsid":             "setsid sh -c 'echo $$ > pid; exec sleep 300' >/dev/null 2>&1 & ",
	"setsid double fork": "(setsid sh -c 'echo $$ > pid; exec sleep 300' &) ; ",
	// A new session with a cleared environment, as daemons do: it carries
	// no marker and leaves the tree at once.
	"env -i setsid":     "(env -i setsid sh -c 'echo $$ > pid; exec sleep 31337' >/dev/null 2>&1 &) ; ",
	"nohup double fork": "( (nohup sh -c 'echo $$ > pid; exec sleep 300' >/dev/null 2>&1 &) &) ; ",
}

func needDetach(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("processes that leave the group are found through /proc")
	}
	for _, c := range []string{"setsid", "nohup", "env"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("no %s command", c)
		}
	}
}

// leftSleep is the result of a command that left a process: it wrote its
// pid as sh, and may be killed before it execs sleep.
var leftSleep = regexp.MustCompile(`^left\n\(exit status 0\)\n\(killed 1 process the command left running: (sh|sleep); run a server that must keep running with background: true\)\n$`)

const waitPid = "while [ ! -s pid ]; do sleep 0.01; done; "

// Detached processes are killed with the command when it ends, and the
// result says so.
func TestDetachedKilledAtExit(t *testing.T) {
	needDetach(t)
	for name, start := range detached {
		t.Run(name, func(t *testing.T) {
			root := workspace(t, nil)
			res := run(t, newEnv(t, root, &approver{}), "bash", jsonArgs(t, map[string]any{"command": start + waitPid + "echo left"}))
			if res.IsError || !leftSleep.MatchString(res.Text) {
				t.Errorf("%+v", res)
			}
			waitDead(t, pidFrom(t, filepath.Join(root, "pid")), "a detached process after the command")
		})
	}
}

// Detached processes are killed when the command times out.
func TestDetachedKilledAtTimeout(t *testing.T) {
	needDetach(t)
	for name, start := range detached {
		t.Run(name, func(t *testing.T) {
			root := workspace(t, nil)
			res := run(t, newEnv(t, root, &approver{}), "bash", jsonArgs(t, map[string]any{"command": start + waitPid + "sleep 300", "timeout_s": 1}))
			if !res.IsError || !strings.HasPrefix(res.Text, "(no output)\n(timed out after 1s: killed 2 processes: sleep ×2)") {
				t.Errorf("%+v", res)
			}
			waitDead(t, pidFrom(t, filepath.Join(root, "pid")), "a detached process after a timeout")
		})
	}
}

// Detached processes are killed when the call is cancelled.
func TestDetachedKilledAtCancel(t *testing.T) {
	needDetach(t)
	for name, start := range detached {
		t.Run(name, func(t *testing.T) {
			root := workspace(t, nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan ctxwin.Result, 1)
			go func() {
				args := jsonArgs(t, map[string]any{"command": start + waitPid + "sleep 300"})
				res, _ := Call(ctx, newEnv(t, root, &approver{}), All(), "bash", json.RawMessage(args))
				done <- res
			}()
			pid := pidFrom(t, filepath.Join(root, "pid"))
			cancel()
			var res ctxwin.Result
			select {
			case res = <-done:
			case <-time.After(30 * time.Second): // hang guard
				t.Fatal("bash did not return after cancel")
			}
			if !res.IsError || !regexp.MustCompile(`\(cancelled: killed \d processes: .*sleep`).MatchString(res.Text) {
				t.Errorf("%+v", res)
			}
			waitDead(t, pid, "a detached process after cancel")
		})
	}
}

// A command's sweep leaves the server's own children alone: one it
// started before the command, in its own process group, keeps running.
func TestSweepSparesOwnChildren(t *testing.T) {
	needDetach(t)
	own := exec.Command("sleep", "300")
	inOwnGroup(own)
	if err := own.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { own.Process.Kill(); own.Wait() }()
	root := workspace(t, nil)
	res := run(t, newEnv(t, root, &approver{}), "bash", jsonArgs(t, map[string]any{"command": detached["env -i setsid"] + waitPid + "echo left"}))
	if !leftSleep.MatchString(res.Text) {
		t.Errorf("%+v", res)
	}
	if !alive(own.Process.Pid) {
		t.Error("the sweep killed a child the server started itself")
	}
}

// A background command keeps running, with what it detached, past its
// call and past a foreground command's sweep, until its session's jobs
// stop; its output goes to the file the result names.
func TestBackgroundRunsUntilStopped(t *testing.T) {
	needDetach(t)
	root := workspace(t, nil)
	env := newEnv(t, root, &approver{})
	env.Jobs = NewJobs()
	defer env.Jobs.Stop()
	cmd := "echo started; echo $$ > shell; " + detached["env -i setsid"] + "exec sleep 300"
	res := run(t, env, "bash", jsonArgs(t, map[string]any{"command": cmd, "background": true}))
	m := regexp.MustCompile(`^Started in the background as job 1 \(process group (\d+)\)\. Its output \(stdout and stderr\) goes to (\S+): `).FindStringSubmatch(res.Text)
	if res.IsError || m == nil {
		t.Fatalf("%+v", res)
	}
	shell, detachedPid := pidFrom(t, filepath.Join(root, "shell")), pidFrom(t, filepath.Join(root, "pid"))
	if fg := run(t, env, "bash", `{"command":"echo foreground"}`); fg.Text != "foreground\n(exit status 0)\n" {
		t.Errorf("a foreground command while a job runs: %q", fg.Text)
	}
	if !alive(shell) || !alive(detachedPid) {
		t.Fatalf("the job did not outlive its call and a foreground command: shell %v, detached %v", alive(shell), alive(detachedPid))
	}
	if out := readFile(t, m[2]); out != "started\n" {
		t.Errorf("output file %q", out)
	}
	note := env.Jobs.Stop()
	if !strings.HasPrefix(note, "background job 1 (echo started;") || !strings.Contains(note, "killed 2 processes: sleep ×2") {
		t.Errorf("stop: %q", note)
	}
	waitDead(t, shell, "the background shell after stop")
	waitDead(t, detachedPid, "the detached process after stop")
	if res := run(t, env, "bash", jsonArgs(t, map[string]any{"command": "true", "background": true})); !res.IsError || !strings.Contains(res.Text, "the session has ended") {
		t.Errorf("a job after stop: %+v", res)
	}
}

// Without a session's jobs (a subagent), background is refused.
func TestBackgroundWithoutJobs(t *testing.T) {
	res := run(t, newEnv(t, workspace(t, nil), &approver{}), "bash", `{"command":"sleep 1","background":true}`)
	if !res.IsError || !strings.Contains(res.Text, "background commands are not available here") {
		t.Errorf("%+v", res)
	}
}

// Commands that run at once (two sessions' turns) leave each other alone:
// a shell started but not yet tracked is not taken for an orphan of
// another command, killed, and reaped from under its own wait.
func TestConcurrentCommandsSpareEachOther(t *testing.T) {
	needDetach(t)
	root := workspace(t, nil)
	env := newEnv(t, root, &approver{})
	const workers, each = 6, 15
	bad := make(chan string, workers*each)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				res := run(t, env, "bash", jsonArgs(t, map[string]any{"command": "echo hi"}))
				if res.Text != "hi\n(exit status 0)\n" {
					bad <- res.Text
				}
			}
		}()
	}
	wg.Wait()
	close(bad)
	n := 0
	for text := range bad {
		if n++; n <= 3 {
			t.Errorf("a command's result: %q", text)
		}
	}
	if n > 0 {
		t.Errorf("%d of %d commands were disturbed by another's sweep", n, workers*each)
	}
}

// A process the server starts for itself in a group of its own while a
// command runs (an MCP server) is spared when it carries ServerChildVar.
func TestSweepSparesMarkedServerChild(t *testing.T) {
	needDetach(t)
	root := workspace(t, nil)
	started := make(chan *exec.Cmd, 1)
	go func() {
		time.Sleep(100 * time.Millisecond) // the command's shell is running
		own := exec.Command("sleep", "300")
		own.Env = append(Environ(), ServerChildVar+"=test")
		inOwnGroup(own)
		if err := own.Start(); err != nil {
			t.Error(err)
		}
		started <- own
	}()
	res := run(t, newEnv(t, root, &approver{}), "bash", jsonArgs(t, map[string]any{"command": "sleep 1; echo done"}))
	own := <-started
	defer func() { own.Process.Kill(); own.Wait() }()
	if res.Text != "done\n(exit status 0)\n" {
		t.Errorf("%+v", res)
	}
	if !alive(own.Process.Pid) {
		t.Error("the sweep killed a marked child the server started while the command ran")
	}
}
