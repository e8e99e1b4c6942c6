//go:build unix

package tools

import (
	"fmt"
	"os/exec"
	"syscall"
)

// inOwnGroup makes cmd the leader of a new process group, so that it and
// everything it starts can be killed together.
func inOwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills cmd's process group. It is harmless when the group is gone.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if err == syscall.ESRCH {
		return nil
	}
	return err
}

// exitSignal names the signal that ended a process ("SIGKILL").
func exitSignal(ee *exec.ExitError) string {
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("signal %d (%s)", int(ws.Signal()), ws.Signal())
	}
	return "a signal"
}
