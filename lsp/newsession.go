package lsp

import (
	"context"
)

// cmdNewSession answers reika.newSession: the agent starts a fresh session.
func (s *server) cmdNewSession(ctx context.Context, _ *executeCommandParams) (any, error) {
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
