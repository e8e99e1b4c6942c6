package agent

import (
	"fmt"
	"strings"

	"github.com/reika-lsp/reika-lsp/agent/mcp"
	"github.com/reika-lsp/reika-lsp/agent/tools"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// PartMCP opens the name of an MCP server's part of the fixed prefix (its
// tool definitions): "MCP " and the server's name.
const PartMCP = "MCP "

// withToolParts is split with its tools part counting reika's own tools
// (the skill tool with them) and each MCP server's tool definitions in a
// part of their own after it, as the tools ts are now; nil for nil.
func withToolParts(split []PrefixPart, ts []tools.Tool) []PrefixPart {
	if split == nil {
		return nil
	}
	var ours []ctxwin.ToolSpec
	var names []string
	var servers []string
	by := map[string][]ctxwin.ToolSpec{}
	for _, t := range ts {
		if srv, ok := mcp.ServerOf(t); ok {
			if _, seen := by[srv]; !seen {
				servers = append(servers, srv)
			}
			by[srv] = append(by[srv], t.Spec())
			continue
		}
		ours = append(ours, t.Spec())
		names = append(names, t.Spec().Name)
	}
	var out []PrefixPart
	for _, p := range split {
		switch {
		case strings.HasPrefix(p.Name, PartMCP):
		case p.Name == PartTools:
			p.Chars, p.Note = ctxwin.ToolChars(ours), strings.Join(names, ", ")
			out = append(out, p)
			for _, srv := range servers {
				out = append(out, mcpPart(srv, by[srv]))
			}
		default:
			out = append(out, p)
		}
	}
	return out
}

func mcpPart(server string, specs []ctxwin.ToolSpec) PrefixPart {
	return PrefixPart{Name: PartMCP + server, Chars: ctxwin.ToolChars(specs), Note: fmt.Sprintf("%d tools", len(specs))}
}

// MCPPrefixParts are the parts of the fixed prefix that the MCP tools
// admitted take in a new session in root with the settings s: one per
// server, counting the tools its mode offers (reika-lsp window).
func MCPPrefixParts(root string, s Settings, admitted []*mcp.Tool) ([]PrefixPart, error) {
	mode, err := resolveMode(root, s.Mode)
	if err != nil {
		return nil, err
	}
	var servers []string
	by := map[string][]ctxwin.ToolSpec{}
	for _, t := range admitted {
		if !mode.allows(t.Spec.Name) {
			continue
		}
		if _, seen := by[t.Server]; !seen {
			servers = append(servers, t.Server)
		}
		by[t.Server] = append(by[t.Server], t.Spec)
	}
	var out []PrefixPart
	for _, srv := range servers {
		out = append(out, mcpPart(srv, by[srv]))
	}
	return out, nil
}
