package tools

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"

	"github.com/reika-lsp/reika-lsp/agent/approval"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

//go:embed bash.md
var bashDescription string

// Bash timeouts, in seconds.
const (
	BashTimeout    = 120
	BashMaxTimeout = 600
)

// bashGrace is how long output may still arrive after the command's process
// group was killed (from a process that left the group), before the pipe is
// closed on it.
const bashGrace = 2 * time.Second

type bashTool struct{}

// bashParams are bash's parameters (params.go).
type bashParams struct {
	Command    string      `json:"command" jsonschema:"The command line, run with bash -c."`
	Timeout    OptionalInt `json:"timeout_s,omitempty" jsonschema:"Timeout in seconds. Default 120, at most 600."`
	Background bool        `json:"background,omitempty" jsonschema:"Run a server or watcher that must keep running: returns at once, its output goes to a file, and it runs until the session ends."`
}

var bashDecl = Declare[bashParams]()

func (bashTool) Spec() ctxwin.ToolSpec {
	return bashDecl.Spec(NameBash, strings.TrimSpace(bashDescription))
}

func (bashTool) Run(ctx context.Context, env *Env, raw json.RawMessage) (ctxwin.Result, error) {
	p, err := bashDecl.Decode(raw)
	if err != nil {
		return errResult(ctxwin.KindBash, "%v", err), nil
	}
	command, timeout, background := p.Command, p.Timeout.N, p.Background
	if strings.TrimSpace(command) == "" {
		return errResult(ctxwin.KindBash, "command is empty"), nil
	}
	if strings.ContainsRune(command, 0) {
		return errResult(ctxwin.KindBash, "command contains a NUL byte"), nil
	}
	if len(command) > approval.TextBytes && env.wouldAsk("command") {
		return errResult(ctxwin.KindBash, "the command is %d bytes, longer than the %d an approval can show whole; "+
			"write the script to a file with write, then run the file", len(command), approval.TextBytes), nil
	}
	var notes []string
	switch {
	case !p.Timeout.Set:
		timeout = BashTimeout
	case timeout <= 0:
		return errResult(ctxwin.KindBash, "timeout_s must be a positive number of seconds, not %d", timeout), nil
	case timeout > BashMaxTimeout:
		notes = append(notes, fmt.Sprintf("(timeout_s %d lowered to the maximum, %d)", timeout, BashMaxTimeout))
		timeout = BashMaxTimeout
	}
	short := "`" + firstLine(command, 80) + "`"
	if strings.Contains(strings.TrimSpace(command), "\n") && !strings.HasSuffix(short, "…`") {
		short = strings.TrimSuffix(short, "`") + " …`"
	}
	verb := "run "
	if background {
		verb = "run in the background "
	}
	if !env.approve(ctx, approval.Request{
		Tool:    NameBash,
		Kind:    "command",
		Summary: verb + short,
		Detail:  command,
	}) {
		return errResult(ctxwin.KindBash, "running %s was denied by the user", short), nil
	}
	if background {
		return runBackground(env, command, short), nil
	}

	out := newOutput(env, "bash")
	run := runCommand(ctx, env.root(), command, time.Duration(timeout)*time.Second, out)
	text, saved := out.finish()
	if run.startErr != nil {
		out.discard()
		return errResult(ctxwin.KindBash, "cannot start the shell: %v", run.startErr), nil
	}

	res := run.result(text, notes, timeout)
	res.SavedTo = saved
	res.Summary = fmt.Sprintf("bash %s: %s, %s", short, res.Summary, plural(int(out.lines()), "line"))
	return res, nil
}

// result is the bash tool's result for a command that ran, whose output
// is text: the output, the notes, how it ended and what was killed. Its
// Summary is the status alone.
func (run runResult) result(text string, notes []string, timeout int) ctxwin.Result {
	var b strings.Builder
	b.WriteString(text)
	if text == "" {
		b.WriteString("(no output)\n")
	} else if !strings.HasSuffix(text, "\n") {
		b.WriteByte('\n')
	}
	for _, n := range notes {
		b.WriteString(n + "\n")
	}
	var status string
	res := ctxwin.Result{Kind: ctxwin.KindBash}
	switch {
	case run.timedOut:
		status = fmt.Sprintf("timed out after %ds", timeout)
		fmt.Fprintf(&b, "(timed out after %ds: %s)\n", timeout, run.endNote())
		res.IsError = true
	case run.cancelled:
		status = "cancelled"
		fmt.Fprintf(&b, "(cancelled: %s)\n", run.endNote())
		res.IsError = true
	case run.signal != "":
		status = "killed by " + run.signal
		fmt.Fprintf(&b, "(killed by %s)\n", run.signal)
	default:
		status = fmt.Sprintf("exit %d", run.exit)
		fmt.Fprintf(&b, "(exit status %d)\n", run.exit)
	}
	if !run.timedOut && !run.cancelled && len(run.killed) > 0 {
		fmt.Fprintf(&b, "(%s; run a server that must keep running with background: true)\n", killedNote(run.killed, " the command left running"))
	}
	if run.left > 0 {
		fmt.Fprintf(&b, "(%s could not be killed)\n", plural(run.left, "process"))
	}
	if run.untracked != nil {
		fmt.Fprintf(&b, "(processes that left the command's process group could not be followed: %v)\n", run.untracked)
	}
	res.Text = b.String()
	res.Summary = status
	return res
}

// commandEnv is the environment of a command: this process's, without the
// secrets (HideSecrets: REIKA_API_KEY, the variable apiKeyEnv names, the
// key under any name), with pagers, editors and prompts that would wait
// for a terminal turned off, and with marker, which the command's
// processes inherit so that they can be found and killed with it.
func commandEnv(marker string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if isSecret(kv) || strings.HasPrefix(kv, markerVar+"=") || strings.HasPrefix(kv, ServerChildVar+"=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PAGER=cat", "GIT_PAGER=cat", "GIT_EDITOR=true", "GIT_TERMINAL_PROMPT=0", "NO_COLOR=1", markerVar+"="+marker)
}

// markerVar carries a command's marker into every process it starts.
const markerVar = "REIKA_COMMAND"

// ServerChildVar marks a process the server starts for itself in a
// process group of its own (an MCP server): no command's sweep takes it
// for an orphan the command left (proc_linux.go). Commands do not inherit
// it.
const ServerChildVar = "REIKA_SERVER_CHILD"

var markerSeq atomic.Int64

// newMarker is a value of markerVar no other command of any process has.
func newMarker() string {
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("%d-%d-%x", os.Getpid(), markerSeq.Add(1), b)
}

// runResult is how a command ended.
type runResult struct {
	exit      int
	signal    string // the signal that killed it, when one did
	timedOut  bool
	cancelled bool
	startErr  error
	// killed names the processes killed when the command ended (the shell
	// itself on a timeout or a cancel, and whatever it left running);
	// left counts those still running after the sweep gave up.
	killed []string
	left   int
	// untracked says why processes that left the command's group could
	// not be followed (the subreaper could not be set), or is nil.
	untracked error
}

// runCommand runs command with bash (sh without it) in dir, writing its
// combined output to w. The command leads its own process group. On
// timeout, on cancel, and when the command exits (so no background
// process outlives it), every process that is the command's is killed: see
// sweep for how they are found, wherever they went (setsid, double forks,
// nohup, daemons).
func runCommand(ctx context.Context, dir, command string, timeout time.Duration, w io.Writer) runResult {
	shell := shellPath()
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var res runResult
	res.untracked = becomeSubreaper()

	pr, pw, err := os.Pipe()
	if err != nil {
		return runResult{startErr: err}
	}
	defer pr.Close()
	cmd := exec.Command(shell, "-c", command)
	cmd.Dir = dir
	marker := newMarker()
	cmd.Env = commandEnv(marker)
	cmd.Stdout, cmd.Stderr = pw, pw // an *os.File: the child writes to it directly
	inOwnGroup(cmd)
	procs := prepareCommand(marker)
	if err := procs.launch(cmd); err != nil {
		pw.Close()
		return runResult{startErr: err}
	}
	pw.Close() // the children hold the write end now
	defer procs.untrack()

	copied := make(chan struct{})
	go func() {
		defer close(copied)
		io.Copy(w, pr)
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	var werr error
	select {
	case werr = <-waited:
	case <-tctx.Done():
		procs.sweep() // the shell is alive: it is swept with the rest
		werr = <-waited
		if ctx.Err() != nil {
			res.cancelled = true
		} else {
			res.timedOut = true
		}
	}
	res.left = procs.sweep() // what was left running, or escaped a first sweep
	killGroup(cmd)
	res.killed = procs.killed
	select {
	case <-copied:
	case <-time.After(bashGrace):
		pr.Close() // a process escaped the sweep and holds the pipe
		<-copied
	}
	res.exit, res.signal = exitStatus(werr)
	return res
}

// exitStatus is the exit code of a command Wait returned werr for, and
// the signal that ended it (exit -1) when one did.
func exitStatus(werr error) (exit int, signal string) {
	var ee *exec.ExitError
	switch {
	case werr == nil:
		return 0, ""
	case errors.As(werr, &ee):
		exit = ee.ExitCode()
		if exit < 0 {
			signal = exitSignal(ee)
		}
		return exit, signal
	default:
		return -1, werr.Error()
	}
}

// endNote says what was killed when the command was ended.
func (run runResult) endNote() string {
	if !sweepFinds {
		return "its process group was killed (processes that left the group are not found on this system)"
	}
	return killedNote(run.killed, "")
}

// killedNote says which processes were killed, "killed 3 processes:
// bash, sleep ×2", with which after the count, or that none was left.
func killedNote(names []string, which string) string {
	if len(names) == 0 {
		return "no process of the command was left to kill"
	}
	count := map[string]int{}
	var order []string
	for _, n := range names {
		if count[n] == 0 {
			order = append(order, n)
		}
		count[n]++
	}
	for i, n := range order {
		if count[n] > 1 {
			order[i] = fmt.Sprintf("%s ×%d", n, count[n])
		}
	}
	return fmt.Sprintf("killed %s%s: %s", plural(len(names), "process"), which, strings.Join(order, ", "))
}

// runBackground starts a background command and says where it went.
func runBackground(env *Env, command, short string) ctxwin.Result {
	if env.Jobs == nil {
		return errResult(ctxwin.KindBash, "background commands are not available here (a subagent's, or no session)")
	}
	jb, path, err := env.Jobs.start(env.root(), env.TempDir, command)
	if err != nil {
		return errResult(ctxwin.KindBash, "cannot start %s in the background: %v", short, err)
	}
	text := fmt.Sprintf("Started in the background as job %d (process group %d). Its output (stdout and stderr) goes to %s: "+
		"read it with read. It keeps running until the session ends, when it and every process it started are killed; "+
		"to stop it sooner, run `kill -- -%d`.\n", jb.n, jb.pid, path, jb.pid)
	return ctxwin.Result{Kind: ctxwin.KindBash, Text: text,
		Summary: fmt.Sprintf("bash %s: started in the background (job %d)", short, jb.n)}
}
