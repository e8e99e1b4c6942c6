package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// Tool names, as the model calls them.
const (
	NameRead     = "read"
	NameWrite    = "write"
	NameEdit     = "edit"
	NameBash     = "bash"
	NameGrep     = "grep"
	NameGlob     = "glob"
	NameFetchURL = "fetch_url"
	NameSubagent = "subagent"
)

// All returns the agent's tools in the order of docs/design.md §4. Their specs
// are constant, so the tool definitions of a request never change.
func All() []Tool {
	return []Tool{readTool{}, writeTool{}, editTool{}, bashTool{}, grepTool{}, globTool{}, fetchTool{}, subagentTool{}}
}

// Specs returns the definitions of ts, in order.
func Specs(ts []Tool) []ctxwin.ToolSpec {
	specs := make([]ctxwin.ToolSpec, len(ts))
	for i, t := range ts {
		specs[i] = t.Spec()
	}
	return specs
}

// Call runs the tool of ts named name. An unknown name is an error the model
// can fix (the result lists the tools it has); a panic in a tool becomes a
// Go error.
func Call(ctx context.Context, env *Env, ts []Tool, name string, args json.RawMessage) (res ctxwin.Result, err error) {
	var names []string
	for _, t := range ts {
		spec := t.Spec()
		if spec.Name == name {
			defer func() {
				if r := recover(); r != nil {
					res, err = ctxwin.Result{}, fmt.Errorf("tool %s panicked: %v\n%s", name, r, debug.Stack())
				}
			}()
			return t.Run(ctx, env, args)
		}
		names = append(names, spec.Name)
	}
	return ctxwin.Result{
		Text:    fmt.Sprintf("Error: there is no tool %q; the tools are %s", name, strings.Join(names, ", ")),
		IsError: true,
		Summary: fmt.Sprintf("Error: no tool %q", truncate(name, 60)),
	}, nil
}
