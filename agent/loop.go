package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/agent/tools"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// maxRounds bounds one turn, in case a model never stops calling tools.
const maxRounds = 1000

// run is one turn (or a subagent's task) in progress.
type run struct {
	h     host
	sess  *session
	tools []tools.Tool
	env   *tools.Env
	// streamed says the request in flight streamed reply text; partial is
	// that text, logged when a cancel cuts the reply off (end), so that the
	// transcript an editor reloads still shows it.
	streamed bool
	partial  strings.Builder
	// taskPaths are the files the prompt names: the first read of one
	// defines the task (toResult).
	taskPaths map[string]bool
}

// runTurn runs the rounds of one turn until the model answers without tool
// calls, the turn is cancelled, or it fails.
func (a *Agent) runTurn(ctx context.Context, sess *session, p AskParams) (res AskResult) {
	defer a.recoverTurn(&res) // a bug (a panic) fails the turn, not the agent: bug.go
	r := a.newRun(sess, p)
	prompt := taskPrompt(p)
	sess.m.StartTurn(prompt)
	turn := sess.m.H.Turns()
	a.mu.Lock()
	a.turn.count = turn
	a.mu.Unlock()
	sess.log.append(record{Kind: recTurn, Turn: turn, Prompt: prompt})
	// The prompt is on disk before anything else runs (counting the new
	// text asks the engine already): a crash then keeps the turn.
	if err := sess.log.sync(); err != nil {
		return r.end(ctx, logStopped(err))
	}
	if err := sess.markLast(); err != nil {
		a.logf("reika: marking the last session: %v", err)
	}
	r.emit(Event{Kind: EventUser, Round: sess.m.H.Rounds() + 1, Text: prompt})
	return a.firstRound(ctx, r)
}

// newRun is a turn of sess for the ask p: the session's tools, and the
// files p names (the first read of one defines the task).
func (a *Agent) newRun(sess *session, p AskParams) *run {
	return &run{h: a, sess: sess, tools: sess.offer.tools, env: a.toolEnv(sess, true), taskPaths: mentionedPaths(p)}
}

// retryTurn answers the session's last prompt again, the model never
// having answered it (AskParams.Retry): the turn goes on from its prompt,
// which is in the history and the log already.
func (a *Agent) retryTurn(ctx context.Context, sess *session) (res AskResult) {
	defer a.recoverTurn(&res)
	last := sess.m.H.Last()
	if last == nil || last.Round != 0 || last.Prompt == "" {
		return AskResult{Status: AskError, Message: "nothing to retry: the model answered the last prompt; give a new one"}
	}
	r := a.newRun(sess, AskParams{Prompt: last.Prompt})
	r.emit(Event{Kind: EventInfo, Text: "Retrying the last prompt, which the model never answered."})
	r.emit(Event{Kind: EventUser, Round: sess.m.H.Rounds() + 1, Text: last.Prompt})
	return a.firstRound(ctx, r)
}

// firstRound runs a turn whose prompt is in the history: what changed
// meanwhile, then its rounds.
func (a *Agent) firstRound(ctx context.Context, r *run) AskResult {
	sess := r.sess
	if err := r.afterRound(ctx); err != nil {
		return r.end(ctx, err)
	}
	if a.countFirst(ctx, sess.m) {
		a.publishStatus(sess) // the first request as the engine counts it
	}
	return r.end(ctx, r.rounds(ctx))
}

// end turns the outcome of a turn into its result.
func (r *run) end(ctx context.Context, err error) AskResult {
	if serr := r.sess.log.sync(); serr != nil && !errors.As(err, new(*logError)) {
		err = logStopped(serr)
	}
	var lerr *logError
	switch {
	case err == nil:
		r.h.clearNotice("log")
		return AskResult{Status: AskDone}
	case errors.As(err, &lerr):
		r.emit(Event{Kind: EventError, Text: err.Error()})
		r.h.notice("log", LevelError, err.Error())
		return AskResult{Status: AskError, Message: err.Error()}
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		r.emit(Event{Kind: EventInfo, Text: "Cancelled."})
		if r.partial.Len() > 0 { // the reply the cancel cut off, as it was shown
			r.sess.log.append(record{Kind: recInfo, Cut: r.partial.String()})
		}
		r.sess.log.append(record{Kind: recInfo, Text: "Cancelled."}) // for reika.transcript after a reload
		r.sess.log.sync()
		return AskResult{Status: AskCancelled, Message: "cancelled"}
	default:
		r.emit(Event{Kind: EventError, Text: err.Error()})
		r.sess.log.append(record{Kind: recInfo, Text: "error: " + err.Error()})
		r.sess.log.sync()
		var u *llm.UnreachableError
		if errors.As(err, &u) {
			r.h.notice("engine", LevelError, err.Error())
			r.h.rediscover()
		}
		return AskResult{Status: AskError, Message: err.Error()}
	}
}

// rounds sends requests until the model answers.
func (r *run) rounds(ctx context.Context) error {
	m := r.sess.m
	retried := false
	for n := 0; ; n++ {
		if n >= maxRounds {
			return fmt.Errorf("stopped after %d rounds in one turn", maxRounds)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := r.roomToAnswer(); err != nil {
			return err
		}
		req := &llm.Request{Messages: m.H.Messages(), Tools: m.H.Tools, MaxTokens: m.Gauge().MaxTokens()}
		div := ctxwin.Diverge(r.sess.trail.prev, req.Messages)
		m.Sent()
		resp, err := r.complete(ctx, req)
		if err != nil {
			var o *llm.OverflowError
			if errors.As(err, &o) && !retried {
				retried = true
				if err := r.recoverOverflow(o); err != nil {
					return err
				}
				continue
			}
			return err
		}
		retried = false
		r.takeReply(req, div, resp)
		if len(resp.Message.ToolCalls) == 0 {
			r.sess.log.append(record{Kind: recRound, Reply: &resp.Message})
			r.sess.logState()
			r.progress()
			if resp.FinishReason == "length" && resp.Message.Content == "" {
				return errors.New("the model ran out of room before answering (finish_reason length); the window may be too small")
			}
			return nil
		}
		r.runTools(ctx, resp.Message.ToolCalls)
		if err := r.afterRound(ctx); err != nil {
			return err
		}
	}
}

// takeReply adds the engine's reply to the window as the newest round,
// with what the engine reported of the request, and emits its reasoning
// and answer.
func (r *run) takeReply(req *llm.Request, div ctxwin.Divergence, resp *llm.Response) {
	m := r.sess.m
	r.debugLine(req.Messages, div, resp)
	r.sess.trail.prev = req.Messages
	m.Setup().ChunkReuse(resp.CacheReuse)
	completion := 0
	if resp.Usage != nil {
		m.Observe(resp.Usage.PromptTokens, resp.Usage.CompletionTokens)
		completion = resp.Usage.CompletionTokens
	}
	m.AddRound(resp.Message, completion)
	round := m.H.Rounds()
	if resp.Message.Reasoning != "" {
		r.emit(Event{Kind: EventReasoning, Round: round, Text: resp.Message.Reasoning})
	}
	// The full reply follows what streamed, even when it is empty: a
	// stream that broke and was asked again streamed text the reply
	// does not have, and the front end replaces it with this.
	if resp.Message.Content != "" || len(resp.Message.ToolCalls) == 0 || r.streamed {
		r.emit(Event{Kind: EventAssistant, Round: round, Text: resp.Message.Content})
	}
}

// recoverOverflow readies the one retry after the engine refused a request
// as too long: it adopts the window the refusal states when none was known
// or the one known is larger (a setting larger than the engine's), learns
// the engine's count of the request, cuts the newest round's results to fit
// and sheds or folds when that is not enough (ctxwin.Manager.Refit); the
// retry's max_tokens is then what the window leaves. It fails when the
// fixed prefix and the task alone leave no room for an answer.
func (r *run) recoverOverflow(o *llm.OverflowError) error {
	m := r.sess.m
	adopted := o.Window > 0 && (m.Gauge().Window() == 0 || o.Window < m.Gauge().Window())
	if adopted {
		r.h.logLine("reika: the engine's window is %d tokens (was %d); adopting it", o.Window, m.Gauge().Window())
		r.sess.setWindow(o.Window, llm.SourceOverflow)
		r.h.adoptWindow(o.Window)
	}
	m.Observe(o.PromptTokens, 0)
	b, known := m.Gauge().Budget()
	if !known {
		return fmt.Errorf("the request is too large for the engine's window, which it does not state; set REIKA_CONTEXT_WINDOW to the engine's window: %w", o)
	}
	ev, fits := m.Refit()
	if ev == nil && !adopted && o.PromptTokens == 0 {
		// The refusal taught nothing: shrink anyway, once.
		ev = m.ShrinkToFit()
		if ev == nil {
			return fmt.Errorf("the request is too large for the context window and nothing more can be shed or folded: %w", o)
		}
		fits = m.Gauge().Size() <= b.Usable
	}
	if ev != nil {
		r.record(ev)
	}
	r.sess.logState()
	if prefix, task := m.Gauge().Floor(); !fits && prefix+task > b.Usable {
		return r.noRoomError(b, prefix, task, o)
	}
	return nil
}

// complete sends one request, streaming text into the transcript.
func (r *run) complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	model := r.h.currentModel()
	round := r.sess.m.H.Rounds() + 1
	r.streamed = false
	r.partial.Reset()
	reasoned := false
	onDelta := func(d llm.Delta) {
		if d.Retract {
			r.retract(round, reasoned)
			reasoned = false
			return
		}
		if d.Reasoning != "" {
			reasoned = true
			r.emit(Event{Kind: EventReasoning, Round: round, Text: d.Reasoning, Delta: true})
		}
		if d.Content != "" {
			r.streamed = true
			r.partial.WriteString(d.Content)
			r.emit(Event{Kind: EventAssistant, Round: round, Text: d.Content, Delta: true})
		}
	}
	if r.sess.subagent {
		onDelta = nil
	}
	req.Subagent = r.sess.subagent
	resp, err := model.Complete(ctx, req, onDelta)
	if err == nil {
		r.partial.Reset() // the whole reply is logged with its round
		if r.sess.tally != nil {
			r.sess.tally.Add(resp)
		}
	}
	return resp, err
}

// runTools runs the calls of the newest round and adds their results.
// Every call gets a result, so a call is never separated from it.
func (r *run) runTools(ctx context.Context, calls []ctxwin.ToolCall) {
	m := r.sess.m
	round := m.H.Rounds()
	for _, c := range calls {
		r.emit(Event{Kind: EventToolCall, Round: round, Tool: c.Name, Args: jsonArgs(c.Arguments), Text: c.Name})
		var res ctxwin.Result
		if ctx.Err() != nil {
			res = ctxwin.Result{Text: "Error: cancelled by the user before it ran", IsError: true, Summary: c.Name + ": cancelled"}
		} else {
			var err error
			res, err = tools.Call(ctx, r.env, r.tools, c.Name, json.RawMessage(c.Arguments))
			if err != nil {
				res = ctxwin.Result{Text: "Error: " + err.Error(), IsError: true, Summary: c.Name + ": failed"}
			}
		}
		m.H.AddResult(r.toResult(c, &res))
	}
}

// afterRound readies the next request once a round's results are in (or a
// turn's prompt): it cuts, reports the results as the model will see them,
// logs the round, and sheds or folds when the request crossed the shed
// point — after the note round when a fold is coming.
func (r *run) afterRound(ctx context.Context) error {
	m := r.sess.m
	r.applyChanges()
	r.h.countNew(ctx, m)
	plan := m.Prepare()
	last := m.H.Last()
	if last.IsRound() {
		reply := last.Assistant
		r.sess.log.append(record{Kind: recRound, Reply: &reply, Results: last.Results})
	}
	var shrink *ctxwin.Event
	if plan.Shrink {
		note := ""
		if plan.Fold && plan.Note {
			note = r.note(ctx)
		}
		shrink = m.Shrink(plan, note)
	}
	// The results as the model sees them: a shrink cuts them again to the
	// room it made (Event.Recut). The transcript rebuilt from the log
	// (transcript.go) follows this order.
	if last.IsRound() {
		for _, res := range last.Results {
			r.emit(Event{Kind: EventToolResult, Round: last.Round, Tool: res.Tool, Text: res.Shown(),
				Tokens: m.Prices().Tokens(len(res.Shown()), true)})
		}
	}
	if shrink != nil {
		r.record(shrink)
	}
	r.sayChanges()
	if plan.Applied != nil {
		r.record(plan.Applied)
	}
	r.sess.logState()
	if err := r.sess.log.sync(); err != nil {
		return logStopped(err)
	}
	if last.IsRound() {
		r.progress()
	}
	if stalled, why := m.Gauge().Stalled(); stalled {
		msg := "Stopped: shrinking the context made no progress: " + why
		r.h.notice("", LevelWarning, msg)
		return errors.New(msg)
	}
	return nil
}

// note is the note round of this turn (see session.note).
func (r *run) note(ctx context.Context) string {
	return r.sess.note(ctx, r.h.currentModel(), r.h.logLine)
}

// record and emit write to the session's log and transcript.
func (r *run) record(ev *ctxwin.Event) { r.sess.record(ev) }

func (r *run) emit(ev Event) { r.sess.emit(ev) }

// progress reports the round and publishes the status.
func (r *run) progress() {
	if r.sess.subagent {
		return
	}
	m := r.sess.m
	st := r.h.publishStatus(r.sess)
	round := m.H.Rounds()
	what := "answered"
	if last := m.H.Last(); last != nil && last.IsRound() && len(last.Results) > 0 {
		res := last.Results[len(last.Results)-1]
		what = res.Tool
		if res.Path != "" {
			what += " " + res.Path
		}
	}
	r.h.reportProgress(Progress{Turn: m.H.Turns(), Round: round, Text: fmt.Sprintf("round %d · %s · %s", round, what, st.Text)})
}

// toResult completes a tool's result for the history: the call it
// answers, and whether it defines the task.
func (r *run) toResult(c ctxwin.ToolCall, res *ctxwin.Result) *ctxwin.Result {
	res.CallID, res.Tool = c.ID, c.Name
	r.sess.addNested(res)
	if res.Kind == "" {
		res.Kind = c.Name
	}
	// A read of a file the user named or attached defines the task: it is
	// never shed. Only its first read in the turn, and only when it leaves
	// room for the work (an eighth of the usable window).
	if res.Kind == ctxwin.KindRead && !res.IsError && r.taskPaths[filepath.ToSlash(res.Path)] {
		if b, ok := r.sess.m.Gauge().Budget(); ok && r.sess.m.Prices().Tokens(len(res.Text), false) <= b.Usable/8 {
			res.Task = true
			delete(r.taskPaths, filepath.ToSlash(res.Path))
		}
	}
	if res.Kind == ctxwin.KindRead || res.Kind == ctxwin.KindEdit || res.Kind == ctxwin.KindWrite {
		if res.Path != "" {
			r.h.repoMap(r.sess.root).Touch(res.Path)
		}
	}
	return res
}

// taskPrompt is the user message of a turn: the prompt, and the attached
// selection.
func taskPrompt(p AskParams) string {
	prompt := strings.TrimSpace(p.Prompt)
	at := p.Attachment
	if at == nil {
		return prompt
	}
	var b strings.Builder
	b.WriteString(prompt)
	fmt.Fprintf(&b, "\n\n<selection file=%q lines=\"%d-%d\">\n%s\n</selection>", at.Path, at.StartLine, at.EndLine, strings.TrimRight(at.Text, "\n"))
	return b.String()
}

var pathLike = regexp.MustCompile(`[\w./-]+\.[A-Za-z0-9]+`)

// mentionedPaths are the files a request names: the attachment's and the
// path-like words of the prompt.
func mentionedPaths(p AskParams) map[string]bool {
	out := map[string]bool{}
	if p.Attachment != nil && p.Attachment.Path != "" {
		out[filepath.ToSlash(p.Attachment.Path)] = true
	}
	for _, w := range pathLike.FindAllString(p.Prompt, -1) {
		out[strings.TrimPrefix(strings.Trim(w, "."), "./")] = true
	}
	return out
}

func jsonArgs(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}
