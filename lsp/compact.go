package lsp

import (
	"context"
	"errors"

	"github.com/reika-lsp/reika-lsp/agent"
)

// cmdCompact answers reika.compact (also the Compact context code
// action): the note round and a fold now, run as a turn (turn.go).
func (s *server) cmdCompact(ctx context.Context, p *executeCommandParams) (any, error) {
	svc, err := s.agent(ctx)
	if err != nil {
		return nil, err
	}
	t := s.beginTurn(ctx, svc, p.WorkDoneToken, "Compacting context")
	if t == nil {
		return jsonResult(agent.CompactResult{Message: errTurnRunning})
	}
	var res agent.CompactResult
	err = t.run(func(ctx context.Context) string {
		res = svc.Compact(ctx)
		return res.Message
	})
	switch {
	case errors.Is(err, errCancelledEarly):
		res = agent.CompactResult{Message: cancelledText}
	case err != nil:
		res = agent.CompactResult{Message: err.Error()}
	}
	if ctx.Err() != nil {
		return nil, errRequestCancelled
	}
	return jsonResult(res)
}
