package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/agent/tools"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// What the agent does around its turns (loop.go): it counts the texts new
// to a request with the engine, runs a note round on demand, gives the
// tools their environment, and runs subagents as turns of child sessions.

// countNew counts the texts new to the next request with the engine's
// tokenizer, in one call, when the model has one. A failure is logged once
// and never stops the turn: the estimate prices those texts instead.
func (a *Agent) countNew(ctx context.Context, m *ctxwin.Manager) {
	a.mu.Lock()
	tc, ok := a.eng.model.(llm.TokenCounter)
	a.mu.Unlock()
	if !ok {
		return
	}
	uncounted := m.Uncounted()
	if len(uncounted.Texts) == 0 {
		return
	}
	counts, err := tc.CountTokens(ctx, uncounted.Texts)
	switch {
	case err == nil:
		uncounted.Set(counts)
	case errors.Is(err, llm.ErrNoTokenizer), ctx.Err() != nil, unreachable(err):
		// Unreachable: the engine's wait says so; the texts stay
		// uncounted and are counted at the next round.
	default:
		a.eng.countFailed.Do(func() {
			a.logf("reika: counting tokens with the engine's tokenizer failed, so new text is estimated instead: %v", err)
		})
	}
}

// unreachable says err is the engine being down, not its tokenizer failing.
func unreachable(err error) bool {
	var u *llm.UnreachableError
	return errors.As(err, &u)
}

// toolEnv is what the tools of a session may touch.
func (a *Agent) toolEnv(sess *session, subagents bool) *tools.Env {
	env := &tools.Env{
		Root:     a.opts.Workspace.Root(),
		Files:    a.opts.Workspace,
		Approve:  a.appr.approve,
		WouldAsk: a.appr.wouldAsk,
		TempDir:  sess.resultsDir(),
	}
	if !sess.subagent {
		if sess.jobs == nil {
			sess.jobs = tools.NewJobs()
		}
		env.Jobs = sess.jobs
	}
	if env.TempDir == "" {
		env.TempDir = a.tempDir
	}
	for _, h := range strings.Split(a.settings().FetchAllowHosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			env.FetchAllowHosts = append(env.FetchAllowHosts, h)
		}
	}
	if subagents {
		env.Subagent = func(ctx context.Context, task string) (string, error) { return a.subagent(ctx, sess, task) }
	}
	return env
}

// subagentPrompt opens a subagent's own context.
const subagentPrompt = "You are a subagent of Reika, a coding agent. Do the task below with your tools, then answer with a concise report: " +
	"what you found or did, with file paths and line numbers. The report is all the main agent will see."

// subagentTools are the tools a subagent of a session offering ts gets:
// the same, less the subagent tool.
func subagentTools(ts []tools.Tool) []tools.Tool {
	var out []tools.Tool
	for _, t := range ts {
		if t.Spec().Name != tools.NameSubagent {
			out = append(out, t)
		}
	}
	return out
}

// subagent runs a child session with its own context on task and returns
// its report. It shares the model and the tools (but cannot start
// subagents itself), keeps no log, and counts its prompts in the parent's
// tally. Its requests say they are a subagent's, so that an engine with
// several slots keeps them off the session's.
func (a *Agent) subagent(ctx context.Context, parent *session, task string) (string, error) {
	ts := subagentTools(parent.offer.tools)
	system := subagentPrompt + fmt.Sprintf("\n\nEnvironment: the workspace root is %s. Paths are relative to it.", parent.root)
	child := &session{id: parent.id + "/sub", root: parent.root, dir: parent.dir, results: parent.resultsDir(), info: parent.info, tally: parent.tally, subagent: true,
		offer: sessionOffer{mode: parent.offer.mode, tools: ts, skills: parent.offer.skills}}
	child.m = a.newManager(ctxwin.NewHistory(system, tools.Specs(ts)), parent.modelInfo())
	child.m.StartTurn(task)
	r := &run{h: a, sess: child, tools: ts}
	r.env = a.toolEnv(child, false)
	if err := r.afterRound(ctx); err != nil {
		return "", err
	}
	a.countFirst(ctx, child.m)
	if err := r.rounds(ctx); err != nil {
		return "", err
	}
	last := child.m.H.Last()
	return last.Assistant.Content, nil
}
