package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
)

// TestRunDiscoversOnce: `reika-lsp run` discovers the engine once: its
// background discovery and its first request share one, so each fact is
// one log line.
func TestRunDiscoversOnce(t *testing.T) {
	bin := binary(t)
	srv := enginetest.New(enginetest.Options{Window: 16000, Slots: 4, Script: func(r *enginetest.Request) enginetest.Reply {
		return enginetest.Text("done")
	}})
	defer srv.Close()
	cmd := exec.Command(bin, "run", "hello")
	cmd.Dir, cmd.Env = t.TempDir(), isolated(t, srv.URL())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	for _, fact := range []string{"engine: llama.cpp at ", "engine: the server has 4 slots", "this session's requests go to slot 0"} {
		if n := strings.Count(string(out), fact); n != 1 {
			t.Errorf("%q logged %d times:\n%s", fact, n, out)
		}
	}
}
