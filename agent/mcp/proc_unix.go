//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// setGroup starts the server in a process group of its own, so that what
// it starts (npx starts node) ends with it.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// endProcess kills the server's process group, once it has had the time
// the SDK gives it to exit after its stdin closes.
func endProcess(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
