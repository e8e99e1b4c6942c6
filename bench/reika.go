package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/engine"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/agent/tools"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// workspace is the agent's workspace on disk.
type workspace struct {
	tools.DiskFiles
	root string
}

func (w workspace) Root() string { return w.root }

// events keeps what the bench checks of the agent's reports.
type events struct {
	mu      sync.Mutex
	results map[int][]string // turn → tool results as shown, in order
	sheds   int
	folds   int
	errors  []string
}

func (e *events) Transcript(ev agent.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch ev.Kind {
	case agent.EventToolResult:
		e.results[ev.Turn] = append(e.results[ev.Turn], ev.Text)
	case agent.EventShed:
		e.sheds++
	case agent.EventFold:
		e.folds++
	case agent.EventError:
		e.errors = append(e.errors, ev.Text)
	}
}
func (e *events) Status(agent.Status)     {}
func (e *events) Notice(agent.Notice)     {}
func (e *events) Progress(agent.Progress) {}

// reikaRun is what a run of the real agent leaves for the peers' replays:
// the system message and tool definitions it sent.
type reikaRun struct {
	figures  *Figures
	system   string
	toolJSON []string
}

// runReika replays the session through the real agent loop (ctxwin as
// shipped) against a fake llama.cpp engine of the given window and kind, in a fresh
// copy of the workspace under dir. The engine's script answers each
// request by its position in the session and the note rounds with a note.
func runReika(ctx context.Context, src *source, s *Session, window int, eng engineSpec, dir string) (*reikaRun, error) {
	root, err := src.materialize(filepath.Join(dir, "ws"))
	if err != nil {
		return nil, err
	}
	for p, data := range s.Files {
		if err := writeFile(root, p, data); err != nil {
			return nil, err
		}
	}
	ann := newAnnotations()
	opts := enginetest.Options{Shape: enginetest.ShapeLlamaCpp, Window: window, Script: reikaScript(s, ann)}
	eng.Options(&opts)
	srv := enginetest.New(opts)
	defer srv.Close()
	// The client pins the session to a slot (id_slot), holding it by a lock
	// file under its CacheDir: one of the run's own, so that runs at once
	// never see each other's locks.
	model, err := engine.New(engine.Config{BaseURL: srv.URL(), CacheDir: filepath.Join(dir, "cache"),
		ModelsURL: "http://127.0.0.1:1/unused"})
	if err != nil {
		return nil, err
	}
	ev := &events{results: map[int][]string{}}
	// The paths of saved results are in requests: names of a fixed form
	// and length keep every run's requests the same, token for token.
	sessions := 0
	a, err := agent.New(agent.Options{Workspace: workspace{root: root}, Model: model, Events: ev,
		Settings: agent.Settings{Approve: agent.ApproveAll}, StateDir: filepath.Join(dir, "state"),
		SessionsDir: filepath.Join(dir, "sessions"),
		NewSessionID: func() string {
			sessions++
			return fmt.Sprintf("session-%03d", sessions)
		}})
	if err != nil {
		return nil, err
	}
	defer a.Close()
	var problems []string
	for t, turn := range s.Turns {
		res := a.Ask(ctx, agent.AskParams{Prompt: turn.Prompt})
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if res.Status != agent.AskDone {
			problems = append(problems, fmt.Sprintf("turn %d ended %s: %s", t+1, res.Status, res.Message))
		}
	}
	recs := srv.Requests()
	f := figures("reika", window, eng, s, recs, ann)
	f.Sheds, f.Folds = ev.sheds, ev.folds
	f.ShrinkAt = shrinkShares(srv, window, recs)
	f.Problems = append(f.Problems, problems...)
	f.Problems = append(f.Problems, checkOutputs(s, ev)...)

	run := &reikaRun{figures: f}
	for _, r := range recs {
		if r.Path == "/v1/chat/completions" && len(r.Request.Messages) > 0 {
			run.system = r.Request.Messages[0].Content
			run.toolJSON, err = toolJSON(r.Body)
			if err != nil {
				return nil, err
			}
			break
		}
	}
	if run.system == "" {
		return nil, fmt.Errorf("reika sent no request")
	}
	return run, nil
}

// shrinkShares is, for each shrink, the size of the request it replaced
// (ctxwin.Replaced) by the engine's count, as a share of the shed point then
// in force. A shrink shows as a main request that does not extend the one
// before it; the shed point follows from the window and the reserve, which
// rises to the longest reply so far (ctxwin.Reserve).
func shrinkShares(srv *enginetest.Server, window int, recs []enginetest.Recorded) []float64 {
	var (
		out     []float64
		prev    *enginetest.Recorded
		largest int
		toolsOf []string
	)
	for i := range recs {
		r := &recs[i]
		if r.Path != "/v1/chat/completions" || r.Request.ToolChoice == "none" || r.Status != 200 {
			continue
		}
		if prev != nil && !ctxwin.Diverge(prev.Request.Messages, r.Request.Messages).Append {
			if toolsOf == nil {
				toolsOf, _ = toolJSON(r.Body)
			}
			reply := ctxwin.Message{Role: ctxwin.RoleAssistant, Content: prev.Reply.Content, Reasoning: prev.Reply.Reasoning,
				ToolCalls: prev.Reply.ToolCalls}
			n := srv.PromptTokens(toolsOf, ctxwin.Replaced(prev.Request.Messages, reply, r.Request.Messages))
			b := ctxwin.NewBudget(window, ctxwin.Reserve{Largest: largest}.Tokens(window))
			out = append(out, float64(n)/float64(b.ShedPoint))
		}
		largest = max(largest, r.CompletionTokens)
		prev = r
	}
	return out
}

// checkOutputs compares the tool results the agent showed with the
// session's: the tools ran again in the agent's own copy of the workspace,
// and must have said the same, except where the agent cut a result to fit.
func checkOutputs(s *Session, ev *events) []string {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	var problems []string
	differ := 0
	for t, turn := range s.Turns {
		var want []string
		for _, st := range turn.Steps {
			want = append(want, st.Outputs...)
		}
		got := ev.results[t+1]
		if len(got) != len(want) {
			problems = append(problems, fmt.Sprintf("turn %d: the agent showed %d tool results, the session has %d", t+1, len(got), len(want)))
			continue
		}
		for i := range want {
			if got[i] != want[i] && !strings.Contains(got[i], "hit the context limit") {
				differ++
			}
		}
	}
	if differ > 0 {
		problems = append(problems, fmt.Sprintf("%d tool results differ from the session's", differ))
	}
	return problems
}
