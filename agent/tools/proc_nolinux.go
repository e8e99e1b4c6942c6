//go:build !linux

package tools

import "os/exec"

// Without /proc a command's processes are its process group: those that
// leave it (setsid, a daemon's double fork) are not found.

func becomeSubreaper() error { return nil }

// sweepFinds says whether sweep finds and names a command's processes.
const sweepFinds = false

// commandProcs is a running command.
type commandProcs struct {
	cmd    *exec.Cmd
	killed []string
}

func prepareCommand(marker string) *commandProcs { return &commandProcs{} }

func (c *commandProcs) track(cmd *exec.Cmd) { c.cmd = cmd }

func (c *commandProcs) launch(cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	c.track(cmd)
	return nil
}

func (c *commandProcs) untrack() {}

// sweep kills the command's process group; what it killed is not known.
func (c *commandProcs) sweep() (left int) {
	killGroup(c.cmd)
	return 0
}
