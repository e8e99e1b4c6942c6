//go:build !unix

package tools

import "os/exec"

// inOwnGroup does nothing where process groups are not available.
func inOwnGroup(cmd *exec.Cmd) {}

// killGroup kills the command's process (its children may survive).
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}

// exitSignal names the signal that ended a process.
func exitSignal(ee *exec.ExitError) string { return "a signal" }
