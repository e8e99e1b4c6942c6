package tools

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// TestSpecialFilesRefused gives every file tool a FIFO, a socket and a
// device: each refuses at once (a FIFO would block a read forever).
func TestSpecialFilesRefused(t *testing.T) {
	root := workspace(t, map[string]string{"dir/ok.txt": "fine\n"})
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o600); err != nil {
		t.Skipf("cannot make a FIFO: %v", err)
	}
	l, err := net.Listen("unix", filepath.Join(root, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	os.Symlink(filepath.Join(root, "fifo"), filepath.Join(root, "dir", "to-fifo"))
	os.Symlink("/dev/zero", filepath.Join(root, "zero"))
	env := newEnv(t, root, &approver{})
	for _, p := range []string{"fifo", "sock", "dir/to-fifo", "zero"} {
		for _, tc := range []struct{ tool, args string }{
			{"read", jsonArgs(t, map[string]any{"path": p})},
			{"write", jsonArgs(t, map[string]any{"path": p, "content": "x"})},
			{"edit", jsonArgs(t, map[string]any{"path": p, "old_string": "a", "new_string": "b"})},
			{"grep", jsonArgs(t, map[string]any{"pattern": "x", "path": p})},
		} {
			done := make(chan ctxwin.Result, 1)
			go func() {
				res, _ := Call(context.Background(), env, All(), tc.tool, json.RawMessage(tc.args))
				done <- res
			}()
			select {
			case res := <-done:
				if !res.IsError || !strings.Contains(res.Text, "not a regular file") {
					t.Errorf("%s %s: %+v", tc.tool, p, res)
				}
			case <-time.After(10 * time.Second): // hang guard
				t.Fatalf("%s %s blocked", tc.tool, p)
			}
		}
	}
	// A directory search skips them and finds the rest.
	if res := run(t, env, "grep", jsonArgs(t, map[string]any{"pattern": "fine"})); res.IsError || !strings.Contains(res.Text, "dir/ok.txt:1:fine") {
		t.Errorf("grep of the workspace: %+v", res)
	}
}
