package lsp

import (
	"context"
	"encoding/json"
)

// cmdCancel answers reika.cancel: it stops the running turn (an ask or a
// compaction), if any.
func (s *server) cmdCancel(context.Context, *executeCommandParams) (any, error) {
	cancelled := false
	if svc := s.currentAgent(); svc != nil {
		cancelled = svc.Cancel()
	}
	if s.cancelTurn() {
		cancelled = true
	}
	return jsonResult(struct {
		Cancelled bool `json:"cancelled"`
	}{cancelled})
}

// progressCancel answers window/workDoneProgress/cancel: it stops the
// turn (or the compaction) whose progress the user cancelled. The third way
// to cancel, $/cancelRequest on reika.ask, is cancelPreempter's
// (handler.go).
func (s *server) progressCancel(raw json.RawMessage) {
	var p progressCancelParams
	if err := decodeParams(raw, &p); err != nil {
		s.logf("lsp: window/workDoneProgress/cancel: %v", err)
		return
	}
	key, ok := tokenKey(p.Token)
	if !ok {
		s.logf("lsp: window/workDoneProgress/cancel: bad token %s", truncate(string(p.Token), 64))
		return
	}
	s.cancelTurnByProgress(key)
}
