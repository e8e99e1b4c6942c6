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

// windowMCP is what the MCP servers a session in the working directory
// would start take of the fixed prefix: it starts them (the user's, and
// the workspace's when the user trusts them; it never asks), lists their
// tools and stops them. parts are a part of the prefix per server (the
// tools the mode offers), which the table and the total count; print
// prints a line per server.
func windowMCP(window int, s agent.Settings) (parts []agent.PrefixPart, reports []mcp.Report, print func(io.Writer)) {
	root, err := os.Getwd()
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return nil, nil, func(io.Writer) {}
	}
	servers, lines := mcpServers(root)
	if len(servers) == 0 && len(lines) == 0 {
		return nil, nil, func(w io.Writer) {
			fmt.Fprintf(w, "\nMCP servers: none (%s in this directory, [mcp.servers.NAME] in %s)\n", mcp.WorkspaceFile, agent.ConfigFilePath())
		}
	}
	set := mcp.NewSet(mcp.Options{Environ: tools.Environ})
	defer set.Close()
	set.Start(context.Background(), servers)
	var reserved []string
	for _, t := range tools.All() {
		reserved = append(reserved, t.Spec().Name)
	}
	budget := agent.MCPBudgetChars(window)
	admitted, reports := set.Plan(budget, reserved)
	parts, err = agent.MCPPrefixParts(root, s, admitted)
	if err != nil {
		lines = append(lines, err.Error())
	}
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
	return parts, reports, func(w io.Writer) {
		fmt.Fprintf(w, "\nMCP servers: %d of a budget of %d chars (%d%% of the window) in tool definitions\n", used, budget, agent.MCPBudgetPercent)
		for _, l := range append(out, lines...) {
			fmt.Fprintln(w, "  "+l)
		}
	}
}

// mcpServers loads the MCP servers a session in root would start: the
// user's, and the workspace's when the user trusts them. lines say what
// could not be loaded or will not be started, and why.
func mcpServers(root string) (servers []mcp.Server, lines []string) {
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
		why := "is not trusted yet (a session asks)"
		if mcp.Declined(agent.StateDir(), root, hash) {
			why = "is declined (never start its servers; a changed file asks again)"
		}
		for _, s := range ws {
			lines = append(lines, fmt.Sprintf("%s (%s): not started: the workspace's %s %s", s.Name, s.From, mcp.WorkspaceFile, why))
		}
		ws = nil
	}
	return append(servers, ws...), lines
}
