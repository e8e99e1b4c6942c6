package main

import (
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/agent/mcp/mcptest"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// mcpTestServer is the test MCP server (agent/mcp/mcptest), built once.
func mcpTestServer(t *testing.T) string { return mcptest.Binary(t) }

// writeConfig writes the config.toml of an isolated environment.
func writeConfig(t *testing.T, env []string, text string) {
	t.Helper()
	for _, kv := range env {
		if dir, ok := strings.CutPrefix(kv, "XDG_CONFIG_HOME="); ok {
			os.MkdirAll(filepath.Join(dir, "reika"), 0o755)
			if err := os.WriteFile(filepath.Join(dir, "reika", "config.toml"), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatal("no XDG_CONFIG_HOME")
}

// callOnce is an engine script that calls tool with args once, then
// answers with the result it got; it records the tools each request
// offered.
func callOnce(tool, args string, offered *[][]string, mu *sync.Mutex) enginetest.Script {
	return func(r *enginetest.Request) enginetest.Reply {
		mu.Lock()
		*offered = append(*offered, slices.Clone(r.Tools))
		mu.Unlock()
		last := r.Messages[len(r.Messages)-1]
		if last.Role == ctxwin.RoleTool {
			return enginetest.Text("the tool said: " + last.Content)
		}
		return enginetest.Call(tool, args)
	}
}

// TestRunMCPServers runs a turn with three servers of the user's
// config.toml: the test server over stdio, the same over streamable HTTP
// (with a header from the environment), and one that does not exist. The
// engine sees the tools of the two that run, calls one, and the call runs
// after the approval of the allow list; the missing one is reported and
// the turn goes on.
func TestRunMCPServers(t *testing.T) {
	bin, srvBin := binary(t), mcpTestServer(t)
	web := httptest.NewServer(mcptest.Handler("X-Token: tok"))
	defer web.Close()
	var mu sync.Mutex
	var offered [][]string
	engine := enginetest.New(enginetest.Options{Window: 16000, Script: callOnce("mcp__local__echo", `{"text":"from the model"}`, &offered, &mu)})
	defer engine.Close()
	env := isolated(t, engine.URL())
	writeConfig(t, env, fmt.Sprintf(`
[mcp.servers.local]
command = %q

[mcp.servers.web]
type = "http"
url = %q
headers = { X-Token = "${WEB_TOKEN}" }

[mcp.servers.gone]
command = "/nonexistent/mcp-server"
`, srvBin, web.URL+"/mcp"))
	cmd := exec.Command(bin, "run", "say hello through the tool")
	cmd.Dir = t.TempDir()
	cmd.Env = append(env, "WEB_TOKEN=tok", "REIKA_MCP_ALLOW=local")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	text := string(out)
	if !strings.Contains(text, "the tool said: echo: from the model") {
		t.Errorf("the call did not run:\n%s", text)
	}
	if !strings.Contains(text, "MCP server gone (user): failed:") || !strings.Contains(text, "/nonexistent/mcp-server") {
		t.Errorf("the missing server is not reported:\n%s", text)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(offered) != 2 {
		t.Fatalf("%d requests, want 2", len(offered))
	}
	for _, name := range []string{"read", "bash", "mcp__local__echo", "mcp__local__image", "mcp__web__echo", "mcp__web__slow"} {
		if !slices.Contains(offered[0], name) {
			t.Errorf("the first request does not offer %s: %v", name, offered[0])
		}
	}
	if !slices.Equal(offered[0], offered[1]) {
		t.Errorf("the tools changed between rounds:\n%v\n%v", offered[0], offered[1])
	}
}

// TestRunMCPNeedsApprovalAndTrust: under ask, without the allow list and
// without a terminal to ask, a call is denied and the turn goes on; the
// workspace's .mcp.json is not started, because nobody trusted it.
func TestRunMCPNeedsApprovalAndTrust(t *testing.T) {
	bin, srvBin := binary(t), mcpTestServer(t)
	var mu sync.Mutex
	var offered [][]string
	engine := enginetest.New(enginetest.Options{Window: 16000, Script: callOnce("mcp__local__echo", `{"text":"x"}`, &offered, &mu)})
	defer engine.Close()
	env := isolated(t, engine.URL())
	writeConfig(t, env, fmt.Sprintf("[mcp.servers.local]\ncommand = %q\n", srvBin))
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, ".mcp.json"), []byte(fmt.Sprintf(`{"mcpServers": {"ws": {"command": %q}}}`, srvBin)), 0o644)
	cmd := exec.Command(bin, "run", "try the tool")
	cmd.Dir, cmd.Env = root, env
	cmd.Stdin = strings.NewReader("") // no terminal: nobody to ask
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	text := string(out)
	if !strings.Contains(text, "denied (no terminal to ask; use --approve): call echo on the MCP server local") ||
		!strings.Contains(text, "calling mcp__local__echo was denied") {
		t.Errorf("the call was not denied:\n%s", text)
	}
	if !strings.Contains(text, "not started (no terminal to ask; answer once in a terminal, or start them from your config.toml): start the MCP servers of this workspace's .mcp.json (ws)") ||
		!strings.Contains(text, "are not started: the workspace is not trusted") {
		t.Errorf("the workspace's servers were not refused:\n%s", text)
	}
	mu.Lock()
	defer mu.Unlock()
	if slices.ContainsFunc(offered[0], func(n string) bool { return strings.HasPrefix(n, "mcp__ws__") }) {
		t.Errorf("the untrusted workspace's tools are offered: %v", offered[0])
	}
}
