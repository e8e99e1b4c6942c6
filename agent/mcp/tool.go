package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/reika-lsp/reika-lsp/agent/approval"
	"github.com/reika-lsp/reika-lsp/agent/tools"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// KindPrefix opens the approval kind of a call of an MCP tool:
// "mcp:" followed by the tool's name, so that allowing one for the session
// allows that tool only. The approve setting `all` runs them; `ask` and
// `edits` ask, unless the allow list (mcpAllow) names the tool or its
// server.
const KindPrefix = "mcp:"

// Tool is one tool of a connected server, named for the request.
type Tool struct {
	Server string // the server's name in the configuration
	Orig   string // the tool's name on the server
	Spec   ctxwin.ToolSpec
}

// Allowed says whether a call of the tool orig of server runs without
// asking (the mcpAllow setting).
type Allowed func(server, orig, name string) bool

// AgentTool is t as one of the agent's tools: a call is approved (unless
// allowed says it need not be), then run on the server.
func (s *Set) AgentTool(t *Tool, allowed Allowed) tools.Tool {
	return agentTool{set: s, t: t, allowed: allowed}
}

type agentTool struct {
	set     *Set
	t       *Tool
	allowed Allowed
}

func (a agentTool) Spec() ctxwin.ToolSpec { return a.t.Spec }

func (a agentTool) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (ctxwin.Result, error) {
	name := a.t.Spec.Name
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	var obj map[string]any
	if err := json.Unmarshal(args, &obj); err != nil {
		return errorResult(name, "the arguments are not a JSON object: %v", err), nil
	}
	if a.allowed == nil || !a.allowed(a.t.Server, a.t.Orig, a.t.Spec.Name) {
		req := approval.Request{Tool: name, Kind: KindPrefix + name,
			Summary: fmt.Sprintf("call %s on the MCP server %s", a.t.Orig, a.t.Server), Detail: prettyArgs(args)}
		if env.Approve == nil || !env.Approve(ctx, req) {
			return errorResult(name, "calling %s was denied by the user", name), nil
		}
	}
	return a.set.call(ctx, a.t, args), nil
}

// prettyArgs is the arguments as an approval shows them: indented JSON.
func prettyArgs(args json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, args, "", "  ") != nil {
		return string(args)
	}
	return b.String()
}

// ServerOf names the server of a tool AgentTool made; false for any other
// tool.
func ServerOf(t tools.Tool) (string, bool) {
	a, ok := t.(agentTool)
	if !ok {
		return "", false
	}
	return a.t.Server, true
}
