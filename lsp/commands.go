package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika-lsp/agent"
)

// askGrace is how long reika.ask waits for the agent to stop after its turn
// was cancelled before it answers anyway. The turn still counts as running
// until the agent returns.
const askGrace = 500 * time.Millisecond

// errTurnRunning answers an ask or a compact while the agent runs a turn.
const errTurnRunning = "a turn is already running: wait for it to end or cancel it (reika.cancel)"

// turn is a running reika.ask or reika.compact.
type turn struct {
	cancel   context.CancelFunc
	progress *workProgress
	done     chan struct{}   // closed when the agent has returned
	result   agent.AskResult // set before done is closed
}

func (s *server) executeCommand(ctx context.Context, raw json.RawMessage) (any, error) {
	var p executeCommandParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, invalidParams("workspace/executeCommand: %v", err)
	}
	switch p.Command {
	case CmdAsk:
		return s.cmdAsk(ctx, &p)
	case CmdCompact:
		return s.cmdCompact(ctx, &p)
	case CmdCancel:
		return s.cmdCancel()
	case CmdStatus:
		return jsonResult(s.status())
	case CmdSave:
		return s.cmdSave(ctx, &p)
	case CmdNewSession:
		return s.cmdNewSession(ctx)
	case CmdTranscript:
		return s.cmdTranscript(ctx, &p)
	}
	return nil, invalidParams("unknown command %q (the server runs %s)", p.Command, strings.Join(Commands, ", "))
}

// askArgs is the argument of reika.ask.
type askArgs struct {
	Prompt string    `json:"prompt"`
	URI    string    `json:"uri"`
	Range  *lspRange `json:"range"`
}

func parseAskArgs(args []json.RawMessage) (askArgs, error) {
	var a askArgs
	if len(args) == 0 {
		return a, errors.New(`want arguments [{"prompt": "..."}]`)
	}
	raw := bytes.TrimSpace(args[0])
	switch {
	case len(raw) > 0 && raw[0] == '"':
		if err := json.Unmarshal(raw, &a.Prompt); err != nil {
			return a, err
		}
	case isObject(raw):
		if err := decodeStrict(raw, &a); err != nil {
			return a, err
		}
	default:
		return a, errors.New(`want an object {"prompt": "...", "uri"?: ..., "range"?: ...}`)
	}
	if strings.TrimSpace(a.Prompt) == "" {
		return a, errors.New("the prompt is empty")
	}
	return a, nil
}

func (s *server) cmdAsk(ctx context.Context, p *executeCommandParams) (any, error) {
	args, err := parseAskArgs(p.Arguments)
	if err != nil {
		return nil, invalidParams("reika.ask: %v", err)
	}
	params := agent.AskParams{Prompt: args.Prompt}
	if params.Attachment, err = s.attachment(args.URI, args.Range); err != nil {
		return nil, invalidParams("reika.ask: %v", err)
	}
	svc, err := s.agent(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return jsonResult(agent.AskResult{Status: agent.AskError, Message: errorMessage(err)})
	}

	// The agent is the one guard of "a turn is running": ask it, so that a
	// refused ask shows no progress. (Two asks that race past this both
	// reach the agent, which refuses one.)
	if st := svc.Status(); st.Busy {
		return jsonResult(agent.AskResult{Session: st.Session, Status: agent.AskError, Message: errTurnRunning})
	}
	turnCtx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.life, cancel)
	t := &turn{cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	if s.turn == nil {
		s.turn = t // the turn the agent's progress reports go to
	}
	s.mu.Unlock()
	t.progress = s.startProgress(p.WorkDoneToken, shorten(args.Prompt))

	s.goTracked(func() {
		defer close(t.done)
		defer stop()
		defer cancel()
		res := s.runAsk(svc, turnCtx, params)
		t.progress.end(askEndMessage(res))
		s.mu.Lock()
		if s.turn == t {
			s.turn = nil
		}
		s.mu.Unlock()
		s.sendStatus(svc.Status(), true)
		t.result = res
	})

	select {
	case <-t.done:
	case <-turnCtx.Done():
		select {
		case <-t.done:
		case <-time.After(askGrace):
			s.logf("lsp: the agent has not stopped %v after its turn was cancelled; answering now", askGrace)
			if ctx.Err() != nil {
				return nil, errRequestCancelled
			}
			return jsonResult(agent.AskResult{Session: svc.Status().Session, Status: agent.AskCancelled, Message: "cancelled; the agent is still stopping"})
		}
	}
	if ctx.Err() != nil {
		return nil, errRequestCancelled
	}
	return jsonResult(t.result)
}

// runAsk runs the agent's turn; a panic in the agent ends the turn with an
// error instead of the server.
func (s *server) runAsk(svc agent.Service, ctx context.Context, p agent.AskParams) (res agent.AskResult) {
	defer func() {
		if r := recover(); r != nil {
			s.logf("lsp: BUG: the agent panicked in Ask: %v", r)
			res = agent.AskResult{Status: agent.AskError, Message: fmt.Sprintf("internal error: %v", r)}
		}
	}()
	return svc.Ask(ctx, p)
}

func askEndMessage(res agent.AskResult) string {
	switch res.Status {
	case agent.AskDone:
		return "Done"
	case agent.AskCancelled:
		return "Cancelled"
	}
	if res.Message != "" {
		return "Failed: " + res.Message
	}
	return "Failed"
}

// attachment reads the selection a reika.ask attaches: uri with range is
// that range (an empty range attaches nothing), uri alone is the whole
// document. The text is the open buffer's when the editor has one.
func (s *server) attachment(docURI string, r *lspRange) (*agent.Attachment, error) {
	if docURI == "" {
		if r != nil {
			return nil, errors.New("a range needs a uri")
		}
		return nil, nil
	}
	text, path, err := s.docs.byURIText(docURI)
	if err != nil {
		return nil, fmt.Errorf("reading the attached document: %w", err)
	}
	name := docURI
	if path != "" {
		name = s.relPath(path)
	}
	if r == nil {
		last := lineCount(text)
		if last > 1 && (strings.HasSuffix(text, "\n") || strings.HasSuffix(text, "\r")) {
			last-- // no line after the final line break
		}
		return &agent.Attachment{Path: name, StartLine: 1, EndLine: last, Text: text}, nil
	}
	start := offsetAt(text, r.Start.Line, r.Start.Character)
	end := offsetAt(text, r.End.Line, r.End.Character)
	if end < start {
		start, end = end, start
	}
	if start == end {
		return nil, nil
	}
	startLine, _ := positionAt(text, start)
	endLine, endChar := positionAt(text, end)
	if endChar == 0 && endLine > startLine {
		endLine-- // the selection ends at the start of a line: that line is not in it
	}
	return &agent.Attachment{Path: name, StartLine: startLine + 1, EndLine: endLine + 1, Text: text[start:end]}, nil
}

func (s *server) cmdCompact(ctx context.Context, p *executeCommandParams) (any, error) {
	svc, err := s.agent(ctx)
	if err != nil {
		return nil, err
	}
	if svc.Status().Busy { // the agent's guard, as in cmdAsk
		return jsonResult(agent.CompactResult{Message: errTurnRunning})
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.life, cancel)
	defer stop()
	c := &turn{cancel: cancel}
	s.mu.Lock()
	if s.compact == nil {
		s.compact = c // the compaction the agent's progress reports go to
	}
	s.mu.Unlock()
	c.progress = s.startProgress(p.WorkDoneToken, "Compacting context")
	res := s.runCompact(svc, cctx)
	c.progress.end(res.Message)
	s.mu.Lock()
	if s.compact == c {
		s.compact = nil
	}
	s.mu.Unlock()
	s.sendStatus(svc.Status(), true)
	if ctx.Err() != nil {
		return nil, errRequestCancelled
	}
	return jsonResult(res)
}

func (s *server) runCompact(svc agent.Service, ctx context.Context) (res agent.CompactResult) {
	defer func() {
		if r := recover(); r != nil {
			s.logf("lsp: BUG: the agent panicked in Compact: %v", r)
			res = agent.CompactResult{Message: fmt.Sprintf("internal error: %v", r)}
		}
	}()
	return svc.Compact(ctx)
}

func (s *server) cmdCancel() (any, error) {
	cancelled := false
	if svc := s.currentAgent(); svc != nil {
		cancelled = svc.Cancel()
	}
	s.mu.Lock()
	running := []*turn{s.turn, s.compact}
	s.mu.Unlock()
	for _, t := range running {
		if t != nil {
			t.cancel()
			cancelled = true
		}
	}
	return jsonResult(struct {
		Cancelled bool `json:"cancelled"`
	}{cancelled})
}

func (s *server) cmdSave(ctx context.Context, p *executeCommandParams) (any, error) {
	var a struct {
		Path string `json:"path"`
	}
	if err := optionalObjectArg(p.Arguments, &a); errors.Is(err, errNotAnObject) {
		return nil, invalidParams(`reika.save: want [{"path"?: "..."}]`)
	} else if err != nil {
		return nil, invalidParams("reika.save: %v", err)
	}
	path := a.Path
	if path != "" && !filepath.IsAbs(path) {
		s.mu.Lock()
		path = filepath.Join(s.root, path)
		s.mu.Unlock()
	}
	svc, err := s.agent(ctx)
	if err != nil {
		return nil, err
	}
	out, err := svc.Save(path)
	if err != nil {
		return nil, requestFailed("reika.save: %v", err)
	}
	return jsonResult(struct {
		Path string `json:"path"`
	}{out})
}

func (s *server) cmdNewSession(ctx context.Context) (any, error) {
	svc, err := s.agent(ctx)
	if err != nil {
		return nil, err
	}
	id, err := svc.NewSession()
	if err != nil {
		return nil, requestFailed("reika.newSession: %v", err)
	}
	s.sendStatus(svc.Status(), true)
	return jsonResult(struct {
		Session string `json:"session"`
	}{id})
}

// codeAction offers Compact context once the session has a turn.
func (s *server) codeAction(_ context.Context, raw json.RawMessage) (any, error) {
	var p codeActionParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, invalidParams("textDocument/codeAction: %v", err)
	}
	actions := []protocol.CodeAction{}
	svc := s.currentAgent()
	if svc != nil && kindRequested(p.Context.Only, KindCompactContext) && svc.HasTurns() {
		kind := protocol.CodeActionKind(KindCompactContext)
		actions = append(actions, protocol.CodeAction{
			Title:   TitleCompactContext,
			Kind:    &kind,
			Command: protocol.Command{Title: TitleCompactContext, Command: CmdCompact},
		})
	}
	return actions, nil
}

// kindRequested applies a code action request's context.only: a kind is
// wanted when it or one of its parents ("source" for
// "source.compactContext") is listed, or when nothing is.
func kindRequested(only []string, kind string) bool {
	if len(only) == 0 {
		return true
	}
	for _, k := range only {
		if k == kind || strings.HasPrefix(kind, k+".") {
			return true
		}
	}
	return false
}
