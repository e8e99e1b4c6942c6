package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/reika-lsp/reika-lsp/agent/engine"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/agent/tools"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// Env is what a peer policy may use besides the conversation: the window,
// exact token counts (the real peers estimate the newest messages; exact
// counts only help them), the system message, and summary calls.
type Env interface {
	Window() int
	// System is the system message every main request opens with.
	System() ctxwin.Message
	// Tokens is the prompt tokens of a main request of msgs (after the
	// system message, which it counts, as it does the tool definitions).
	Tokens(msgs []ctxwin.Message) int
	// MessageTokens is one message's tokens.
	MessageTokens(m ctxwin.Message) int
	// Summarize sends a summary call of the whole request msgs (system
	// message included, if any; with the tool definitions when tools) and
	// returns the reply, about length tokens long. A request too long for
	// the window returns an *llm.OverflowError.
	Summarize(msgs []ctxwin.Message, tools bool, length int) (string, error)
}

// Policy is a peer's context management: a function from the conversation
// so far (and what it made of it: summaries, drops, masks) to the next
// request's messages.
type Policy interface {
	// Add appends the session's newest messages (a prompt, a reply, tool
	// results) to the conversation.
	Add(msgs ...ctxwin.Message)
	// Next returns the messages after the system message of the next main
	// request, after any summary call the policy makes first.
	Next(env Env) ([]ctxwin.Message, error)
	// Served reports the engine's usage of the main request just answered.
	Served(promptTokens, completionTokens int)
	// Refused says the engine refused the main request msgs as too long. It
	// returns the messages to send instead, or nil to give up the round.
	Refused(env Env, msgs []ctxwin.Message) ([]ctxwin.Message, error)
	// TurnEnd is called when a turn's answer is in.
	TurnEnd(env Env)
}

// A PolicySpec names a policy and builds a fresh one for a run.
type PolicySpec struct {
	Name string
	// Peer is what it models, for the report.
	Peer string
	New  func() Policy
}

// replayer runs a session under a policy against a fake engine.
type replayer struct {
	ctx    context.Context
	s      *Session
	window int
	srv    *enginetest.Server
	model  llm.Model
	cur    *cursor
	count  *counter
	system ctxwin.Message
	specs  []ctxwin.ToolSpec
}

func (r *replayer) Window() int            { return r.window }
func (r *replayer) System() ctxwin.Message { return r.system }
func (r *replayer) MessageTokens(m ctxwin.Message) int {
	return r.count.message(m)
}
func (r *replayer) Tokens(msgs []ctxwin.Message) int {
	return r.count.prompt(msgs, true) + r.count.message(r.system)
}

func (r *replayer) Summarize(msgs []ctxwin.Message, tools bool, length int) (string, error) {
	r.cur.summarize(max(length, 1))
	defer r.cur.summarize(0)
	req := &llm.Request{Messages: msgs}
	if tools {
		req.Tools = r.specs
	}
	resp, err := r.model.Complete(r.ctx, req, nil)
	if err != nil {
		return "", err
	}
	return resp.Message.Content, nil
}

// runPeer replays the session under a policy against a fresh fake
// llama.cpp engine of the given window and kind, with reika's system message and
// tool definitions, so only the policy differs. The tools do not run
// again: their results are the session's.
func runPeer(ctx context.Context, s *Session, spec PolicySpec, window int, eng engineSpec, base *reikaRun, dir string) (*Figures, error) {
	ann := newAnnotations()
	cur := &cursor{}
	opts := enginetest.Options{Shape: enginetest.ShapeLlamaCpp, Window: window, Script: peerScript(s, cur, ann)}
	eng.Options(&opts)
	srv := enginetest.New(opts)
	defer srv.Close()
	// The peers send no n_cache_reuse: the engine's --cache-reuse applies;
	// and no id_slot (noSlot): the server picks the slot.
	model, err := engine.New(engine.Config{BaseURL: srv.URL(), CacheDir: filepath.Join(dir, "cache"),
		ModelsURL: "http://127.0.0.1:1/unused", CacheReuse: engine.CacheReuseServer, HTTPClient: peerHTTP()})
	if err != nil {
		return nil, err
	}
	r := &replayer{ctx: ctx, s: s, window: window, srv: srv, model: model, cur: cur,
		count:  newCounter(srv, base.toolJSON),
		system: ctxwin.Message{Role: ctxwin.RoleSystem, Content: base.system},
		specs:  tools.Specs(tools.All())}
	pol := spec.New()
	var problems []string
	miscounted := 0
	for t, turn := range s.Turns {
		pol.Add(ctxwin.Message{Role: ctxwin.RoleUser, Content: turn.Prompt})
		for st, step := range turn.Steps {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			cur.at(t, st)
			msgs, err := pol.Next(r)
			if err != nil {
				return nil, fmt.Errorf("%s, turn %d step %d: %w", spec.Name, t+1, st, err)
			}
			resp, err := r.send(msgs, &miscounted)
			if llm.IsOverflow(err) {
				cur.at(t, st)
				retry, rerr := pol.Refused(r, msgs)
				if rerr != nil {
					return nil, fmt.Errorf("%s, turn %d step %d: %w", spec.Name, t+1, st, rerr)
				}
				if retry != nil {
					cur.at(t, st)
					resp, err = r.send(retry, &miscounted)
				}
			}
			if err != nil && !llm.IsOverflow(err) {
				return nil, fmt.Errorf("%s, turn %d step %d: %w", spec.Name, t+1, st, err)
			}
			reply := s.message(t, st)
			if resp != nil {
				pol.Served(respUsage(resp))
				if !sameReply(resp.Message, reply) && resp.FinishReason != "length" {
					// A reply cut for lack of room is counted in CutReplies.
					problems = append(problems, fmt.Sprintf("turn %d step %d: the engine's reply differs from the session's (finish %s)", t+1, st, resp.FinishReason))
				}
				reply = resp.Message
			}
			reply.Role = ctxwin.RoleAssistant
			add := []ctxwin.Message{reply}
			for j, c := range step.Calls {
				add = append(add, ctxwin.Message{Role: ctxwin.RoleTool, ToolCallID: c.ID, Content: step.Outputs[j]})
			}
			if len(reply.ToolCalls) != len(step.Calls) {
				// A reply cut short lost its calls: keep the session's so the
				// results still answer a call.
				add[0] = s.message(t, st)
			}
			pol.Add(add...)
		}
		pol.TurnEnd(r)
	}
	if miscounted > 0 {
		problems = append(problems, fmt.Sprintf("%d requests where the policy's token count differs from the engine's", miscounted))
	}
	f := figures(spec.Name, window, eng, s, srv.Requests(), ann)
	f.Problems = append(f.Problems, problems...)
	return f, nil
}

// send sends a main request and checks the policy's count against the
// engine's.
func (r *replayer) send(msgs []ctxwin.Message, miscounted *int) (*llm.Response, error) {
	all := append([]ctxwin.Message{r.system}, msgs...)
	want := r.Tokens(msgs)
	n := len(r.srv.Requests())
	resp, err := r.model.Complete(r.ctx, &llm.Request{Messages: all, Tools: r.specs}, nil)
	if recs := r.srv.Requests(); len(recs) > n && recs[len(recs)-1].PromptTokens != want {
		*miscounted++
	}
	return resp, err
}

func respUsage(resp *llm.Response) (int, int) {
	if resp.Usage == nil {
		return 0, 0
	}
	return resp.Usage.PromptTokens, resp.Usage.CompletionTokens
}

func sameReply(a, b ctxwin.Message) bool {
	if a.Content != b.Content || a.Reasoning != b.Reasoning || len(a.ToolCalls) != len(b.ToolCalls) {
		return false
	}
	for i := range a.ToolCalls {
		if a.ToolCalls[i] != b.ToolCalls[i] {
			return false
		}
	}
	return true
}
