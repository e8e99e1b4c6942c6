package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
)

// TestSessionStartReusesRepoMap: the session start of a new agent (a new
// process) on an unchanged workspace takes the repo map the last one left
// in the cache directory, without parsing or ranking, and its fixed prefix
// is the same.
func TestSessionStartReusesRepoMap(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := t.TempDir()
	then := time.Now().Add(-time.Hour) // older than the cache's racy window
	for i := range 6 {
		p := filepath.Join(root, "pkg", fmt.Sprintf("f%d.go", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(fmt.Sprintf("package pkg\n\nfunc F%d() int { return F0() }\n", i)), 0o644)
		os.Chtimes(p, then, then)
	}
	srv := enginetest.New(enginetest.Options{Window: 16000})
	defer srv.Close()
	for i, wantReused := range []bool{false, true} {
		a := newAgent(t, srv, root, agent.Settings{}, nil)
		if res := a.Ask(context.Background(), agent.AskParams{Prompt: "hello"}); res.Status == agent.AskError {
			t.Fatalf("agent %d: %+v", i, res)
		}
		if s := agent.RepoMapStats(a); s.Reused != wantReused || s.Files != 6 {
			t.Errorf("agent %d: repo map %+v, want reused %v", i, s, wantReused)
		}
		a.Close()
	}
	var systems []string
	for _, r := range srv.Requests() {
		if r.Path == "/v1/chat/completions" {
			systems = append(systems, r.Request.Messages[0].Content)
		}
	}
	if len(systems) != 2 || systems[0] != systems[1] || !strings.Contains(systems[0], "pkg/f0.go") {
		t.Errorf("fixed prefixes of the two sessions (%d):\n%s", len(systems), strings.Join(systems, "\n---\n"))
	}
}
