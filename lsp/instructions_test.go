package lsp

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// Project instructions at every level through the server: the global
// AGENTS.md and the workspace's CLAUDE.md (it has no AGENTS.md) are in the
// fixed prefix; a nested AGENTS.md is not, and reaches the model once, with
// the first read in its directory.
func TestServerInstructionsAtEveryLevel(t *testing.T) {
	config := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", config)
	writeUnder(t, config, "reika/AGENTS.md", "Global rule.\n")
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: func(r *enginetest.Request) enginetest.Reply {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == ctxwin.RoleUser && strings.Contains(last.Content, "read a"):
			return enginetest.Call("read", `{"path":"web/a.ts"}`)
		case last.Role == ctxwin.RoleUser && strings.Contains(last.Content, "read b"):
			return enginetest.Call("read", `{"path":"web/b.ts"}`)
		}
		return enginetest.Text("ok")
	}})
	defer srv.Close()
	h := realAgent(t, srv)
	writeUnder(t, h.root, "CLAUDE.md", "Claude rule.\n")
	writeUnder(t, h.root, filepath.Join("web", "AGENTS.md"), "Web rule.\n")
	writeUnder(t, h.root, filepath.Join("web", "a.ts"), "let a = 1\n")
	writeUnder(t, h.root, filepath.Join("web", "b.ts"), "let b = 2\n")
	h.initialize(nil, nil)
	for _, prompt := range []string{"read a", "read b"} {
		var res agent.AskResult
		h.mustCommand(CmdAsk, []any{map[string]any{"prompt": prompt}}, &res)
		if res.Status != agent.AskDone {
			t.Fatalf("%s: %+v", prompt, res)
		}
	}
	reqs := srv.Requests()
	sys := reqs[0].Request.Messages[0].Content
	if !strings.Contains(sys, "Global rule.") || !strings.Contains(sys, "Claude rule.") || strings.Contains(sys, "Web rule.") {
		t.Errorf("the prefix's instructions:\n%s", sys)
	}
	last := reqs[len(reqs)-1].Request.Messages
	var results []string
	nested := 0
	for _, m := range last {
		if m.Role == ctxwin.RoleTool {
			results = append(results, m.Content)
			nested += strings.Count(m.Content, "Web rule.")
		}
	}
	if nested != 1 || len(results) != 2 || !strings.Contains(results[0], "let a = 1") || !strings.Contains(results[0], "Web rule.") {
		t.Errorf("the nested AGENTS.md reached the model %d times; the results: %q", nested, results)
	}
	h.shutdownExit(true)
}
