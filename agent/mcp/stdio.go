package mcp

import (
	"os/exec"
	"strings"
	"sync"
	"time"
)

// stdioCommand is the command of a stdio server: env over environ.
func stdioCommand(srv Server, environ []string) *exec.Cmd {
	cmd := exec.Command(srv.Command, srv.Args...)
	env := append([]string(nil), environ...)
	for k, v := range srv.Env {
		env = append(env, k+"="+v)
	}
	cmd.Env = env
	setGroup(cmd)
	// A process the server started that keeps its stderr open does not
	// hold up the end of the server.
	cmd.WaitDelay = time.Second
	return cmd
}

// tailBytes is how much of a server's stderr is kept for its error
// reports.
const tailBytes = 600

// tail keeps the last bytes a server wrote to stderr.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailBytes {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-tailBytes:]...)
	}
	t.mu.Unlock()
	return len(p), nil
}

// String is the kept stderr on one line.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(strings.Fields(string(t.buf)), " ")
}
