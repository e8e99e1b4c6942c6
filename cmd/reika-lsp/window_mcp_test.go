package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
)

// `reika-lsp window` prices each MCP server's tools as a part of the fixed
// prefix, after ours, and counts them in the total; in plan mode, which
// offers none of them, they take nothing.
func TestWindowPricesMCPServers(t *testing.T) {
	srvBin := mcpTestServer(t)
	config, state := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(config, "reika"), 0o755)
	os.WriteFile(filepath.Join(config, "reika", "config.toml"), []byte(fmt.Sprintf("[mcp.servers.local]\ncommand = %q\n", srvBin)), 0o644)
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, ".mcp.json"), []byte(`{"mcpServers": {"ws": {"command": "/nonexistent/x"}}}`), 0o644)
	t.Chdir(root)
	env := map[string]string{"XDG_CONFIG_HOME": config, "XDG_STATE_HOME": state}
	out, errs, code := runEnv(t, env, "window", "--window", "16000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	row := regexp.MustCompile(`(?m)^  MCP local +(\d+) chars .* 5 tools$`).FindStringSubmatch(out)
	tools := regexp.MustCompile(`(?m)^  tools +\d+ chars .*   read, write`).FindString(out)
	if row == nil || tools == "" || strings.Index(out, tools) > strings.Index(out, row[0]) {
		t.Fatalf("no MCP row after the tools row:\n%s", out)
	}
	if !strings.Contains(out, "ws (workspace): not started: the workspace's .mcp.json is not trusted yet (a session asks)") {
		t.Errorf("the untrusted workspace server is not listed:\n%s", out)
	}
	var j struct {
		Prefix []agent.PrefixPart `json:"prefix"`
		MCP    []struct{ Name, State string }
	}
	jout, _, _ := runEnv(t, env, "window", "--window", "16000", "--json")
	if err := json.Unmarshal([]byte(jout), &j); err != nil {
		t.Fatalf("%v: %s", err, jout)
	}
	total, mcpChars := 0, 0
	for _, p := range j.Prefix {
		total += p.Chars
		if p.Name == agent.PartMCP+"local" {
			mcpChars = p.Chars
		}
	}
	if want, _ := strconv.Atoi(row[1]); mcpChars != want || mcpChars == 0 || len(j.MCP) != 1 || j.MCP[0].State != "connected" {
		t.Errorf("--json: MCP part %d chars (table %s), reports %+v", mcpChars, row[1], j.MCP)
	}
	if !strings.Contains(out, fmt.Sprintf("Fixed prefix of a new session here: ~%d tokens", total/4)) {
		t.Errorf("the total does not count the MCP part (%d chars in all):\n%s", total, out)
	}
	env["REIKA_MODE"] = "plan"
	if out, _, _ = runEnv(t, env, "window", "--window", "16000"); strings.Contains(out, "  MCP local") {
		t.Errorf("plan mode prices MCP tools it does not offer:\n%s", out)
	}
}
