package lsp

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/engine"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// realAgent starts the server with the real agent against srv.
func realAgent(t *testing.T, srv *enginetest.Server) *harness {
	state := t.TempDir()
	return start(t, harnessOptions{newAgent: func(opts agent.Options) (agent.Service, error) {
		model, err := engine.New(engine.Config{BaseURL: srv.URL(), CacheDir: t.TempDir()})
		if err != nil {
			return nil, err
		}
		opts.Model, opts.StateDir = model, state
		return agent.New(opts)
	}})
}

func writeUnder(t *testing.T, root, rel, text string) {
	t.Helper()
	p := filepath.Join(root, rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestServerSkillsCommandsAndModes drives the real agent through the
// server: reika.commands lists the built-in and custom commands, a skill is
// listed then loaded, a custom command's prompt reaches the model with its
// arguments, /compact and /mode run in the agent and never reach the
// model, and the status shows the mode.
func TestServerSkillsCommandsAndModes(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: func(r *enginetest.Request) enginetest.Reply {
		last := r.Messages[len(r.Messages)-1]
		if last.Role == ctxwin.RoleUser && strings.Contains(last.Content, "use the skill") {
			return enginetest.Call("skill", `{"name":"deploy"}`)
		}
		return enginetest.Text("ok")
	}})
	defer srv.Close()
	h := realAgent(t, srv)
	writeUnder(t, h.root, ".agents/skills/deploy/SKILL.md", "---\nname: deploy\ndescription: Deploy the site\n---\nRun DEPLOY-BODY make deploy.\n")
	writeUnder(t, h.root, ".reika/commands/explain.md", "---\ndescription: Explain a file\nargument-hint: FILE\n---\nExplain $ARGUMENTS briefly.\n")
	h.initialize(nil, nil)

	var list struct {
		Commands []agent.Command `json:"commands"`
	}
	h.mustCommand(CmdCommands, nil, &list)
	var names []string
	for _, c := range list.Commands {
		names = append(names, c.Name)
		if c.Description == "" {
			t.Errorf("/%s has no description", c.Name)
		}
	}
	if got := strings.Join(names, " "); got != "compact new save mode skills help explain" {
		t.Errorf("reika.commands lists %q", got)
	}

	var res agent.AskResult
	h.mustCommand(CmdAsk, []any{map[string]any{"prompt": "/compact"}}, &res)
	if res.Status != agent.AskDone || res.Message != "Nothing to fold" || len(srv.Requests()) != 0 {
		t.Errorf("/compact: %+v, %d requests", res, len(srv.Requests()))
	}
	h.mustCommand(CmdAsk, []any{map[string]any{"prompt": "use the skill"}}, &res)
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.Contains(reqs[0].Request.Messages[0].Content, "- deploy: Deploy the site") ||
		strings.Contains(reqs[0].Request.Messages[0].Content, "DEPLOY-BODY") {
		t.Fatalf("%d requests; the skill list is not as it should be", len(reqs))
	}
	if last := reqs[1].Request.Messages[len(reqs[1].Request.Messages)-1]; !strings.Contains(last.Content, "DEPLOY-BODY") {
		t.Errorf("the skill's body did not come back: %q", last.Content)
	}

	h.mustCommand(CmdAsk, []any{map[string]any{"prompt": "/explain main.go"}}, &res)
	reqs = srv.Requests()
	if last := reqs[len(reqs)-1].Request.Messages; last[len(last)-1].Content != "Explain main.go briefly." {
		t.Errorf("the custom command's prompt: %q", last[len(last)-1].Content)
	}

	h.mustCommand(CmdAsk, []any{map[string]any{"prompt": "/mode plan"}}, &res)
	if res.Status != agent.AskDone || !strings.Contains(res.Message, "Mode plan") {
		t.Errorf("/mode plan: %+v", res)
	}
	var st agent.Status
	h.mustCommand(CmdStatus, nil, &st)
	if st.Mode != "plan" || !strings.HasPrefix(st.Text, "plan · ") || !strings.HasPrefix(st.Tooltip, "Mode: plan") {
		t.Errorf("the status does not show the mode: %+v", st)
	}
	if !strings.Contains(st.Tooltip, "Prefix: system prompt ~") || !strings.Contains(st.Tooltip, " · skills ~") || !strings.Contains(st.Tooltip, " · mode ~") {
		t.Errorf("the tooltip does not split the prefix:\n%s", st.Tooltip)
	}
	h.mustCommand(CmdAsk, []any{map[string]any{"prompt": "what should change?"}}, &res)
	reqs = srv.Requests()
	if tools := reqs[len(reqs)-1].Request.Tools; slices.Contains(tools, "write") || slices.Contains(tools, "edit") || slices.Contains(tools, "bash") ||
		!slices.Contains(tools, "skill") {
		t.Errorf("plan mode sent %v", tools)
	}
	for _, r := range reqs {
		for _, m := range r.Request.Messages {
			if m.Role == ctxwin.RoleUser && strings.HasPrefix(m.Content, "/") {
				t.Errorf("a slash command reached the model: %q", m.Content)
			}
		}
	}
	h.mustCommand(CmdAsk, []any{map[string]any{"prompt": "/bogus"}}, &res)
	if res.Status != agent.AskError || !strings.Contains(res.Message, "/explain FILE") {
		t.Errorf("/bogus: %+v", res)
	}
}
