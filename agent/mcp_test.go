package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/approval"
	"github.com/reika-lsp/reika-lsp/agent/engine"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/agent/mcp/mcptest"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// mcpTestServer is the test MCP server (agent/mcp/mcptest), built once.
func mcpTestServer(t *testing.T) string { return mcptest.Binary(t) }

// trustApprover answers the trust question with answer and counts it;
// it allows every call.
type trustApprover struct {
	mu     sync.Mutex
	asked  int
	answer agent.Decision
}

func (a *trustApprover) Approve(_ context.Context, r approval.Request) agent.Decision {
	if r.Kind != "mcp-trust" {
		return agent.Allow
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked++
	return a.answer
}

// offers records the tool names of every request.
func offers(mu *sync.Mutex, got *[][]string, reply func(*enginetest.Request) enginetest.Reply) enginetest.Script {
	return func(r *enginetest.Request) enginetest.Reply {
		mu.Lock()
		*got = append(*got, slices.Clone(r.Tools))
		mu.Unlock()
		return reply(r)
	}
}

func newMCPAgent(t *testing.T, srv *enginetest.Server, root, state, config string, appr agent.Approver, ev agent.Events) *agent.Agent {
	t.Helper()
	model, err := engine.New(engine.Config{BaseURL: srv.URL(), CacheDir: t.TempDir(), ModelsURL: "http://127.0.0.1:1/never"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Options{Workspace: diskWorkspace{root: root}, Model: model, Approver: appr, Events: ev,
		Settings: agent.Settings{Approve: agent.ApproveAsk}, StateDir: state, MCPConfig: config, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestMCPWorkspaceTrust: a workspace's servers start only once the user
// trusts its .mcp.json; the answer is remembered for those bytes, and a
// changed file is asked about again.
func TestMCPWorkspaceTrust(t *testing.T) {
	bin := mcpTestServer(t)
	root, state := t.TempDir(), t.TempDir()
	mcpFile := filepath.Join(root, ".mcp.json")
	os.WriteFile(mcpFile, []byte(fmt.Sprintf(`{"mcpServers": {"ws": {"command": %q}}}`, bin)), 0o644)
	var mu sync.Mutex
	var got [][]string
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: offers(&mu, &got, func(*enginetest.Request) enginetest.Reply { return enginetest.Text("ok") })})
	defer srv.Close()
	turn := func(answer agent.Decision) (asked int, tools []string, ev *collector) {
		appr := &trustApprover{answer: answer}
		ev = &collector{}
		a := newMCPAgent(t, srv, root, state, "", appr, ev)
		defer a.Close()
		if res := a.Ask(context.Background(), agent.AskParams{Prompt: "hi"}); res.Status != agent.AskDone {
			t.Fatalf("ask: %+v", res)
		}
		mu.Lock()
		defer mu.Unlock()
		return appr.asked, got[len(got)-1], ev
	}
	hasWS := func(tools []string) bool { return slices.Contains(tools, "mcp__ws__echo") }
	if asked, tools, _ := turn(agent.Allow); asked != 1 || !hasWS(tools) {
		t.Fatalf("first open: asked %d times, tools %v", asked, tools)
	}
	if asked, tools, _ := turn(agent.Deny); asked != 0 || !hasWS(tools) {
		t.Fatalf("second open: asked %d times (the answer was not remembered), tools %v", asked, tools)
	}
	os.WriteFile(mcpFile, []byte(fmt.Sprintf(`{"mcpServers": {"ws": {"command": %q, "args": []}}}`, bin)), 0o644)
	asked, tools, ev := turn(agent.Deny)
	if asked != 1 || hasWS(tools) {
		t.Fatalf("after a change: asked %d times, tools %v", asked, tools)
	}
	said := false
	for _, e := range ev.kinds(agent.EventInfo) {
		said = said || strings.Contains(e.Text, "are not started: the workspace is not trusted")
	}
	if !said {
		t.Error("the transcript does not say the servers were not started")
	}
	// Deny was this time only: asked again. Never is remembered.
	if asked, tools, _ := turn(agent.Never); asked != 1 || hasWS(tools) {
		t.Fatalf("never: asked %d times, tools %v", asked, tools)
	}
	asked, tools, ev = turn(agent.Allow)
	if asked != 0 || hasWS(tools) {
		t.Fatalf("after never: asked %d times (the no was not remembered), tools %v", asked, tools)
	}
	said = false
	for _, e := range ev.kinds(agent.EventInfo) {
		said = said || strings.Contains(e.Text, "you chose not to start this workspace's servers")
	}
	if !said {
		t.Error("the transcript does not say the servers are declined")
	}
}

// TestMCPListChangedAtNextTurn: a server that says its tools changed
// mid-turn changes the request's tools at the next turn, not before: one
// change of the prefix, said in the transcript. The status tooltip has a
// line per server.
func TestMCPListChangedAtNextTurn(t *testing.T) {
	bin := mcpTestServer(t)
	root, state := t.TempDir(), t.TempDir()
	config := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(config, []byte(fmt.Sprintf("[mcp.servers.srv]\ncommand = %q\n[mcp.servers.gone]\ncommand = \"/nonexistent/x\"\n", bin)), 0o644)
	var mu sync.Mutex
	var got [][]string
	step := 0
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: offers(&mu, &got, func(r *enginetest.Request) enginetest.Reply {
		step++
		switch step {
		case 1:
			return enginetest.Call("mcp__srv__add", `{}`)
		case 2:
			return enginetest.Call("mcp__srv__echo", `{"text":"still the old tools"}`)
		}
		return enginetest.Text("done")
	})})
	defer srv.Close()
	ev := &collector{}
	a := newMCPAgent(t, srv, root, state, config, &trustApprover{}, ev)
	defer a.Close()
	a.Ask(context.Background(), agent.AskParams{Prompt: "add a tool"})
	a.Ask(context.Background(), agent.AskParams{Prompt: "and now?"})
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 4 {
		t.Fatalf("%d requests, want 4", len(got))
	}
	for i := 0; i < 3; i++ {
		if slices.Contains(got[i], "mcp__srv__extra") || !slices.Equal(got[i], got[0]) {
			t.Errorf("request %d (turn 1) tools changed mid-turn: %v", i+1, got[i])
		}
	}
	if !slices.Contains(got[3], "mcp__srv__extra") {
		t.Errorf("the next turn does not offer the new tool: %v", got[3])
	}
	var infos []string
	for _, e := range ev.kinds(agent.EventInfo) {
		infos = append(infos, e.Text)
	}
	joined := strings.Join(infos, "\n")
	if strings.Count(joined, "The tool definitions changed") != 1 || !strings.Contains(joined, "MCP server gone (user): failed") {
		t.Errorf("transcript infos:\n%s", joined)
	}
	tip := a.Status().Tooltip
	if !strings.Contains(tip, "MCP servers:") || !strings.Contains(tip, "srv (user): 6 tools") || !strings.Contains(tip, "gone (user): failed") {
		t.Errorf("tooltip:\n%s", tip)
	}
	_ = ctxwin.ToolChars
}
