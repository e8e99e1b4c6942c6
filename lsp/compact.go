package lsp

import (
	"context"
	"fmt"

	"github.com/reika-lsp/reika-lsp/agent"
)

// cmdCompact answers reika.compact (also the Compact context code
// action): the note round and a fold now, with its own progress.
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
	res := s.runCompact(cctx, svc)
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

// runCompact runs the agent's compaction; a panic in the agent ends it
// with an error instead of the server.
func (s *server) runCompact(ctx context.Context, svc agent.Service) (res agent.CompactResult) {
	defer func() {
		if r := recover(); r != nil {
			s.logf("lsp: BUG: the agent panicked in Compact: %v", r)
			res = agent.CompactResult{Message: fmt.Sprintf("internal error: %v", r)}
		}
	}()
	return svc.Compact(ctx)
}
