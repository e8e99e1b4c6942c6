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

const subagentUsage = `{"task": string}`

func (subagentTool) Spec() ctxwin.ToolSpec {
	return ctxwin.ToolSpec{Name: NameSubagent, Description: strings.TrimSpace(subagentDescription), Parameters: []byte(`{"type":"object","properties":{"task":{"type":"string","description":"The task, with everything needed to do it, and what the report should contain."}},"required":["task"],"additionalProperties":false}`)}
}

func (subagentTool) Run(ctx context.Context, env *Env, raw json.RawMessage) (ctxwin.Result, error) {
	a := parseArgs(raw, subagentUsage)
	task := strings.TrimSpace(a.str("task", true))
	if a.err != nil {
		return errResult(ctxwin.KindSubagent, "%v", a.err), nil
	}
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
