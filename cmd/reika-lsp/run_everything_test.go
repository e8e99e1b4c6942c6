package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/internal/llamaserver"
)

// everythingServer is @modelcontextprotocol/server-everything as
// .ci/prepare-mcp installs it, "" when it is not there.
func everythingServer() string {
	p := filepath.Join(llamaserver.CacheDir(), "mcp", "node_modules", ".bin", "mcp-server-everything")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	if _, err := exec.LookPath("node"); err != nil {
		return ""
	}
	return p
}

// TestRunServerEverything runs a turn against the reference MCP server of
// the protocol's authors, a real third-party server: its tools reach the
// engine, and the model's call of its echo tool runs through the agent.
func TestRunServerEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("a real MCP server is not started under -short (the inner loop): ./test.sh runs it")
	}
	srv := everythingServer()
	if srv == "" {
		if llamaserver.Strict() {
			t.Fatal("@modelcontextprotocol/server-everything not installed (required: REIKA_TEST_STRICT=1; run .ci/prepare-mcp)")
		}
		t.Skip("@modelcontextprotocol/server-everything not installed; run .ci/prepare-mcp")
	}
	bin := binary(t)
	var mu sync.Mutex
	var offered [][]string
	engine := enginetest.New(enginetest.Options{Window: 32000, Script: callOnce("mcp__everything__echo", `{"message":"hello from reika"}`, &offered, &mu)})
	defer engine.Close()
	env := isolated(t, engine.URL())
	writeConfig(t, env, fmt.Sprintf("[mcp.servers.everything]\ncommand = %q\nargs = [\"stdio\"]\n", srv))
	cmd := exec.Command(bin, "run", "--approve", "all", "echo something")
	cmd.Dir = t.TempDir()
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "the tool said: Echo: hello from reika") {
		t.Errorf("the echo call did not run:\n%s", out)
	}
	mu.Lock()
	defer mu.Unlock()
	var theirs []string
	for _, n := range offered[0] {
		if strings.HasPrefix(n, "mcp__everything__") {
			theirs = append(theirs, n)
		}
	}
	if !slices.Contains(theirs, "mcp__everything__echo") || len(theirs) < 5 {
		t.Errorf("the server's tools offered: %v", theirs)
	}
	t.Logf("server-everything offered %d tools: %v", len(theirs), theirs)
}
