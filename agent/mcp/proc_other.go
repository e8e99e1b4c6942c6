//go:build !unix

package mcp

import "os/exec"

func setGroup(*exec.Cmd) {}

func endProcess(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}
