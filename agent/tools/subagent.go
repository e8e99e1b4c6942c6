package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"strings"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

//go:embed subagent.md
var subagentDescription string

type subagentTool struct{}

// subagentParams are subagent's parameters (params.go).
type subagentParams struct {
	Task string `json:"task" jsonschema:"The task, with everything needed to do it, and what the report should contain."`
}

var subagentDecl = Declare[subagentParams]()

func (subagentTool) Spec() ctxwin.ToolSpec {
	return subagentDecl.Spec(NameSubagent, strings.TrimSpace(subagentDescription))
}

func (subagentTool) Run(ctx context.Context, env *Env, raw json.RawMessage) (ctxwin.Result, error) {
	p, err := subagentDecl.Decode(raw)
	if err != nil {
		return errResult(ctxwin.KindSubagent, "%v", err), nil
	}
	task := strings.TrimSpace(p.Task)
	if task == "" {
		return errResult(ctxwin.KindSubagent, "task is empty"), nil
	}
	if env.Subagent == nil {
		return errResult(ctxwin.KindSubagent, "subagents are not available in this session; do the task yourself"), nil
	}
	report, err := env.Subagent(ctx, task)
	if err != nil {
		if ctx.Err() != nil {
			return errResult(ctxwin.KindSubagent, "the subagent was cancelled"), nil
		}
		return errResult(ctxwin.KindSubagent, "the subagent failed: %v", err), nil
	}
	report = strings.TrimSpace(report)
	if report == "" {
		report = "(the subagent returned an empty report)"
	}
	return ctxwin.Result{Kind: ctxwin.KindSubagent, Text: report, Summary: firstLine(report, 200)}, nil
}
