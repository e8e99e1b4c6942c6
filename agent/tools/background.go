package tools

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// Jobs are the background commands of a session (bash with background
// true): servers and watchers that must outlive the call that started
// them, not the session. Their output goes to a file; Stop, when the
// session ends, kills each one and every process it started (sweep). A
// foreground command's sweep leaves them alone while they run.
type Jobs struct {
	mu      sync.Mutex
	jobs    []*job
	stopped bool
}

type job struct {
	n       int
	command string
	pid     int
	procs   *commandProcs
	waited  chan struct{}
}

// NewJobs returns a session's empty set of background commands.
func NewJobs() *Jobs { return &Jobs{} }

// start runs command in the background in dir, its output to a new file
// under outDir, whose path it returns.
func (j *Jobs) start(dir, outDir, command string) (*job, string, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.stopped {
		return nil, "", fmt.Errorf("the session has ended")
	}
	if err := becomeSubreaper(); err != nil {
		return nil, "", fmt.Errorf("processes it starts could not be followed: %w", err)
	}
	if outDir == "" {
		return nil, "", fmt.Errorf("no directory for its output is configured")
	}
	if err := os.MkdirAll(outDir, 0o700); err != nil {
		return nil, "", err
	}
	out, err := os.CreateTemp(outDir, fmt.Sprintf("background-%d-*.log", len(j.jobs)+1))
	if err != nil {
		return nil, "", err
	}
	defer out.Close() // the children hold it
	cmd := exec.Command(shellPath(), "-c", command)
	cmd.Dir = dir
	marker := newMarker()
	cmd.Env = commandEnv(marker)
	cmd.Stdout, cmd.Stderr = out, out
	inOwnGroup(cmd)
	procs := prepareCommand(marker)
	if err := procs.launch(cmd); err != nil {
		os.Remove(out.Name())
		return nil, "", err
	}
	jb := &job{n: len(j.jobs) + 1, command: command, pid: cmd.Process.Pid, procs: procs, waited: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(jb.waited)
	}()
	j.jobs = append(j.jobs, jb)
	return jb, out.Name(), nil
}

// Stop kills every background command and every process each started,
// and says what it killed ("" for nothing). No command starts after it.
func (j *Jobs) Stop() string {
	if j == nil {
		return ""
	}
	j.mu.Lock()
	jobs := j.jobs
	j.jobs, j.stopped = nil, true
	j.mu.Unlock()
	var notes []string
	for _, jb := range jobs {
		left := jb.procs.sweep()
		<-jb.waited
		left = max(left, jb.procs.sweep())
		jb.procs.untrack()
		if len(jb.procs.killed) > 0 || left > 0 {
			n := fmt.Sprintf("background job %d (%s): %s", jb.n, firstLine(jb.command, 60), killedNote(jb.procs.killed, ""))
			if left > 0 {
				n += fmt.Sprintf(", %s could not be killed", plural(left, "process"))
			}
			notes = append(notes, n)
		}
	}
	return strings.Join(notes, "; ")
}

// shellPath is bash, else sh.
func shellPath() string {
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return "/bin/sh"
}
