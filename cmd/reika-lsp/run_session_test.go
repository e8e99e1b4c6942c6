package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
)

// `run --session ID` continues that session of the directory, not the
// last one; an unknown id is a usage error naming it.
func TestRunSession(t *testing.T) {
	bin := binary(t)
	root := t.TempDir()
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: func(r *enginetest.Request) enginetest.Reply {
		return enginetest.Text("answer to " + r.Messages[len(r.Messages)-1].Content)
	}})
	defer srv.Close()
	env := isolated(t, srv.URL())
	run := func(args ...string) (string, int) {
		c := exec.Command(bin, append([]string{"run", "--approve", "all"}, args...)...)
		c.Dir, c.Env = root, env
		out, _ := c.CombinedOutput()
		return string(out), c.ProcessState.ExitCode()
	}
	if out, code := run("the zebra task"); code != 0 {
		t.Fatalf("first run: %d\n%s", code, out)
	}
	logs := stateLogs(t, env)
	if len(logs) != 1 {
		t.Fatalf("logs: %v", logs)
	}
	first := strings.TrimSuffix(filepath.Base(logs[0]), ".jsonl")
	if out, code := run("another task"); code != 0 {
		t.Fatalf("second run: %d\n%s", code, out)
	}
	if out, code := run("--session", first, "and then?"); code != 0 || !strings.Contains(out, "answer to and then?") {
		t.Fatalf("run --session: %d\n%s", code, out)
	}
	recs := srv.Requests()
	var seen []string
	for _, m := range recs[len(recs)-1].Request.Messages {
		seen = append(seen, m.Content)
	}
	if all := strings.Join(seen, "\n"); !strings.Contains(all, "the zebra task") || strings.Contains(all, "another task") {
		t.Errorf("run --session did not continue %s:\n%s", first, all)
	}
	out, code := run("--session", "no-such-id", "hello")
	if code != 2 || !strings.Contains(out, `"no-such-id"`) {
		t.Errorf("run --session with an unknown id: exit %d\n%s", code, out)
	}
}
