package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
)

// A background command runs past its turn and ends with its session:
// at a new session, and at Close.
func TestBackgroundJobsEndWithTheSession(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	root := t.TempDir()
	srv := enginetest.New(enginetest.Options{Window: 32000})
	t.Cleanup(srv.Close)
	r := resumer{t: t, srv: srv, root: root, state: t.TempDir()}
	a := r.start()
	defer a.Close()
	for i, end := range []func(){func() { a.NewSession() }, func() { a.Close() }} {
		pidFile := filepath.Join(root, "pid"+strconv.Itoa(i))
		srv.SetScript(enginetest.Sequence(enginetest.Call("bash", `{"command":"echo $$ > `+pidFile+`; exec sleep 300","background":true}`),
			enginetest.Text("started")))
		if res := a.Ask(context.Background(), agent.AskParams{Prompt: "start a server"}); res.Status != agent.AskDone {
			t.Fatalf("%+v", res)
		}
		pid := 0
		for range 500 {
			if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
				pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if pid == 0 || syscall.Kill(pid, 0) != nil {
			t.Fatalf("the background job is not running after its turn (pid %d)", pid)
		}
		end()
		if running(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("end %d: the background job outlived its session", i)
		}
	}
}

// running reports whether pid is a live process (not a zombie).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}
