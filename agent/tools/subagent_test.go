package tools

import (
	"context"
	"errors"
	"testing"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

func TestSubagent(t *testing.T) {
	root := workspace(t, nil)
	env := newEnv(t, root, &approver{})
	var got string
	env.Subagent = func(ctx context.Context, task string) (string, error) {
		got = task
		return "\n  Found 3 callers.\nDetails: a.go, b.go, c.go\n", nil
	}
	res := run(t, env, "subagent", `{"task":"  find the callers of F  "}`)
	if res.IsError || res.Kind != ctxwin.KindSubagent || res.Text != "Found 3 callers.\nDetails: a.go, b.go, c.go" || res.Summary != "Found 3 callers." || got != "find the callers of F" {
		t.Errorf("%+v (task %q)", res, got)
	}

	env.Subagent = func(context.Context, string) (string, error) { return " ", nil }
	if res := run(t, env, "subagent", `{"task":"x"}`); res.IsError || res.Text != "(the subagent returned an empty report)" {
		t.Errorf("empty report: %+v", res)
	}
	env.Subagent = func(context.Context, string) (string, error) { return "", errors.New("engine unreachable") }
	if res := run(t, env, "subagent", `{"task":"x"}`); !res.IsError || res.Text != "Error: the subagent failed: engine unreachable" {
		t.Errorf("failure: %+v", res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	env.Subagent = func(ctx context.Context, _ string) (string, error) { return "", ctx.Err() }
	if res, err := (subagentTool{}).Run(ctx, env, []byte(`{"task":"x"}`)); err != nil || !res.IsError || res.Text != "Error: the subagent was cancelled" {
		t.Errorf("cancelled: %+v %v", res, err)
	}
	if res := run(t, env, "subagent", `{"task":"   "}`); !res.IsError || res.Text != "Error: task is empty" {
		t.Errorf("empty task: %+v", res)
	}
	env.Subagent = nil
	if res := run(t, env, "subagent", `{"task":"x"}`); !res.IsError || res.Text != "Error: subagents are not available in this session; do the task yourself" {
		t.Errorf("no subagents: %+v", res)
	}
}
