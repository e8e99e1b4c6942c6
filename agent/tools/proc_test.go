package tools

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// TestSetsidChildrenKilled starts processes that leave the command's
// process group (setsid, and setsid after a double fork): they are killed
// with the command, when it ends and when it times out.
func TestSetsidChildrenKilled(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("processes that leave the group are found through /proc")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid command")
	}
	for name, tc := range map[string]struct {
		command string
		timeout int
	}{
		"setsid":      {command: "setsid sh -c 'echo $$ > pid; exec sleep 300' >/dev/null 2>&1 & while [ ! -s pid ]; do sleep 0.01; done; echo left"},
		"double fork": {command: "(setsid sh -c 'echo $$ > pid; exec sleep 300' &) ; while [ ! -s pid ]; do sleep 0.01; done; echo left"},
		"timeout":     {command: "setsid sh -c 'echo $$ > pid; exec sleep 300' & while [ ! -s pid ]; do sleep 0.01; done; sleep 300", timeout: 1},
	} {
		t.Run(name, func(t *testing.T) {
			root := workspace(t, nil)
			args := map[string]any{"command": tc.command}
			if tc.timeout > 0 {
				args["timeout_s"] = tc.timeout
			}
			res := run(t, newEnv(t, root, &approver{}), "bash", jsonArgs(t, args))
			if tc.timeout == 0 && (res.IsError || res.Text != "left\n(exit status 0)\n") {
				t.Errorf("%+v", res)
			}
			waitDead(t, pidFrom(t, filepath.Join(root, "pid")), "a process in a new session after the command")
		})
	}
}
