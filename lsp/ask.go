package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reika-lsp/reika-lsp/agent"
)

// askGrace is how long reika.ask waits for the agent to stop after its turn
// was cancelled before it answers anyway. The turn still counts as running
// until the agent returns.
const askGrace = 500 * time.Millisecond

// askArgs is the argument of reika.ask.
type askArgs struct {
	Prompt string    `json:"prompt"`
	URI    string    `json:"uri"`
	Range  *lspRange `json:"range"`
}

// parseAskArgs reads reika.ask's argument: an object, or the prompt alone
// as a string.
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

// cmdAsk answers reika.ask when the turn ends: it runs the turn on its own
// goroutine, with progress, and answers at once when a turn is already
// running.
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
		res := s.runAsk(turnCtx, svc, params)
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
func (s *server) runAsk(ctx context.Context, svc agent.Service, p agent.AskParams) (res agent.AskResult) {
	defer func() {
		if r := recover(); r != nil {
			s.logf("lsp: BUG: the agent panicked in Ask: %v", r)
			res = agent.AskResult{Status: agent.AskError, Message: fmt.Sprintf("internal error: %v", r)}
		}
	}()
	return svc.Ask(ctx, p)
}

// askEndMessage is the progress end message of a turn.
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
