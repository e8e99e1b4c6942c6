package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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

// cmdAsk answers reika.ask when the turn ends: it runs the turn (turn.go)
// on its own goroutine, and answers at once when a turn is already running.
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

	t := s.beginTurn(ctx, svc, p.WorkDoneToken, shorten(args.Prompt))
	if t == nil {
		return jsonResult(agent.AskResult{Session: svc.Status().Session, Status: agent.AskError, Message: errTurnRunning})
	}
	var res agent.AskResult
	answered := make(chan struct{}) // closed when res is set and the turn has ended
	s.goTracked(func() {
		defer close(answered)
		err := t.run(func(ctx context.Context) string {
			res = svc.Ask(ctx, params)
			return askEndMessage(res)
		})
		switch {
		case errors.Is(err, errCancelledEarly):
			res = agent.AskResult{Session: svc.Status().Session, Status: agent.AskCancelled, Message: "cancelled"}
		case err != nil:
			res = agent.AskResult{Status: agent.AskError, Message: err.Error()}
		}
	})

	select {
	case <-answered:
	case <-t.ctx.Done():
		select {
		case <-answered:
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
	return jsonResult(res)
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
