package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/mcp"
	"github.com/reika-lsp/reika-lsp/agent/tools"
)

// printMCP says what the MCP servers a session in the working directory
// would start take of the fixed prefix: it starts them (the user's, and
// the workspace's when the user trusts them; it never asks), lists their
// tools and stops them — a line per server.
func printMCP(w io.Writer, window int) {
	root, err := os.Getwd()
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return
	}
	var servers []mcp.Server
	var lines []string
	user, err := mcp.LoadUser(agent.ConfigFilePath(), nil)
	if err != nil {
		lines = append(lines, err.Error())
	}
	servers = append(servers, user...)
	ws, hash, err := mcp.LoadWorkspace(root, nil)
	if err != nil {
		lines = append(lines, err.Error())
	}
	if len(ws) > 0 && !mcp.Trusted(agent.StateDir(), root, hash) {
		for _, s := range ws {
			lines = append(lines, fmt.Sprintf("%s (%s): not started: the workspace's %s is not trusted yet (a session asks)", s.Name, s.From, mcp.WorkspaceFile))
		}
		ws = nil
	}
	servers = append(servers, ws...)
	if len(servers) == 0 && len(lines) == 0 {
		fmt.Fprintf(w, "\nMCP servers: none (%s in this directory, [mcp.servers.NAME] in %s)\n", mcp.WorkspaceFile, agent.ConfigFilePath())
		return
	}
	set := mcp.NewSet(mcp.Options{Environ: tools.Environ})
	defer set.Close()
	set.Start(context.Background(), servers)
	var reserved []string
	for _, t := range tools.All() {
		reserved = append(reserved, t.Spec().Name)
	}
	budget := agent.MCPBudgetChars(window)
	_, reports := set.Plan(budget, reserved)
	used := 0
	var out []string
	for _, r := range reports {
		line := r.Line()
		if r.State == mcp.StateConnected {
			used += r.Chars
			line += fmt.Sprintf(" (~%d tokens)", r.Chars/4)
		}
		out = append(out, line)
	}
	fmt.Fprintf(w, "\nMCP servers: %d of a budget of %d chars (%d%% of the window) in tool definitions\n", used, budget, agent.MCPBudgetPercent)
	for _, l := range append(out, lines...) {
		fmt.Fprintln(w, "  "+l)
	}
}
