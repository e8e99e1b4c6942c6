package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// isolated is an environment with its own state and config directories.
func isolated(t *testing.T, baseURL string) []string {
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state"), "XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, "cache"), "PATH=" + os.Getenv("PATH")}
	if baseURL != "" {
		env = append(env, "REIKA_BASE_URL="+baseURL)
	}
	return env
}

func TestRunWithoutEngine(t *testing.T) {
	bin := binary(t)
	cmd := exec.Command(bin, "run", "hello")
	cmd.Dir = t.TempDir()
	cmd.Env = append(isolated(t, ""), "REIKA_BASE_URL=http://127.0.0.1:1/v1", "REIKA_ENGINE_RETRY=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 1 || err == nil {
		t.Fatalf("exit %d (%v), want 1", code, err)
	}
	msg := stderr.String()
	if !strings.Contains(msg, "engine unreachable at http://127.0.0.1:1/v1") || !strings.Contains(msg, "REIKA_BASE_URL") {
		t.Errorf("stderr does not explain:\n%s", msg)
	}
	if strings.Contains(msg, "goroutine ") || strings.Contains(msg, "panic") {
		t.Errorf("a stack trace:\n%s", msg)
	}
}

func TestRunKillAndContinue(t *testing.T) {
	bin := binary(t)
	root := t.TempDir()
	var files []string
	for i := 0; i < 40; i++ {
		name := fmt.Sprintf("src/file%02d.go", i)
		var b strings.Builder
		fmt.Fprintf(&b, "package src\n\n")
		for j := 0; j < 60; j++ {
			fmt.Fprintf(&b, "// F%d_%d does step %d of the work.\nfunc F%d_%d() int { return %d }\n\n", i, j, j, i, j, i*j)
		}
		os.MkdirAll(filepath.Join(root, "src"), 0o755)
		os.WriteFile(filepath.Join(root, name), []byte(b.String()), 0o644)
		files = append(files, name)
	}
	hung := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	reads := 0
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: func(r *enginetest.Request) enginetest.Reply {
		mu.Lock()
		defer mu.Unlock()
		last := r.Messages[len(r.Messages)-1]
		switch {
		case r.ToolChoice == "none":
			return enginetest.Text("NOTE: reading the files in order")
		case last.Role == ctxwin.RoleUser && strings.Contains(last.Content, "next please"):
			return enginetest.Text("resumed and answered")
		case reads == 30:
			once.Do(func() { close(hung) })
			return enginetest.Reply{Content: "never", Fault: enginetest.Fault{FirstByteDelay: time.Minute}}
		}
		reads++
		return enginetest.Call("read", fmt.Sprintf(`{"path":%q}`, files[reads-1]))
	}})
	defer srv.Close()
	env := isolated(t, srv.URL())

	first := exec.Command(bin, "run", "--approve", "all", "read all the files")
	first.Dir, first.Env = root, env
	var out1, err1 bytes.Buffer
	first.Stdout, first.Stderr = &out1, &err1
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hung:
	case <-time.After(60 * time.Second):
		first.Process.Kill()
		t.Fatalf("the run never reached the 30th read:\n%s\n%s", out1.String(), err1.String())
	}
	// The request in flight when the process dies.
	recs := srv.Requests()
	inFlight := recs[len(recs)-1].Request
	first.Process.Kill() // SIGKILL: no chance to flush anything
	first.Wait()
	if !strings.Contains(out1.String(), "▸ read") || !strings.Contains(err1.String(), "[round ") || !strings.Contains(err1.String(), "ctx ") {
		t.Errorf("the run did not print the transcript and the chip:\nstdout:\n%s\nstderr:\n%s", out1.String(), err1.String())
	}
	folded := strings.Contains(out1.String(), "· Folded ")
	shed := strings.Contains(out1.String(), "· Shed ")
	if !shed {
		t.Errorf("the run did not shed before the kill:\n%s", out1.String())
	}

	second := exec.Command(bin, "run", "--approve", "all", "--continue", "next please")
	second.Dir, second.Env = root, env
	out, err := second.CombinedOutput()
	if err != nil {
		t.Fatalf("run --continue: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "resumed and answered") {
		t.Errorf("run --continue printed:\n%s", out)
	}
	recs = srv.Requests()
	var resumed *enginetest.Request
	for i := range recs {
		r := recs[i].Request
		if len(r.Messages) > 0 && strings.Contains(r.Messages[len(r.Messages)-1].Content, "next please") {
			resumed = &r
		}
	}
	if resumed == nil {
		t.Fatal("no request carried the second prompt")
	}
	// Everything the model saw before the interrupted round, byte for byte:
	// the in-flight request minus nothing, then the new turn.
	if d := ctxwin.Diverge(inFlight.Messages, resumed.Messages); !d.Append {
		t.Fatalf("the resumed request diverges at message %d from the request in flight at the kill", d.Index)
	}
	t.Logf("killed after 30 reads (shed %v, folded %v); resumed with %d messages", shed, folded, len(resumed.Messages))
}
