package lsp

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/llm"
)

// cmdStatus answers reika.status: the status item now, the same object as
// reika/status.
func (s *server) cmdStatus(context.Context, *executeCommandParams) (any, error) {
	return jsonResult(s.status())
}

// status is the status item now: the agent's, or what stands in for it
// while it is being built or when it could not be.
func (s *server) status() agent.Status {
	s.mu.Lock()
	svc, err := s.svc, s.svcErr
	s.mu.Unlock()
	switch {
	case svc != nil:
		return svc.Status()
	case err != nil:
		return placeholderStatus(agent.LevelError, "Reika is not running: "+err.Error())
	}
	return placeholderStatus(agent.LevelOK, "Reika is starting…")
}

// sendStatus sends reika/status. With dedupe, a status equal to the last
// one sent is not sent again (the server's own sends at turn boundaries;
// the agent's are always sent).
func (s *server) sendStatus(st agent.Status, dedupe bool) {
	b, err := json.Marshal(st)
	if err != nil {
		s.logf("lsp: encoding the status: %v", err)
		return
	}
	s.statusMu.Lock()
	defer s.statusMu.Unlock()
	if dedupe && bytes.Equal(b, s.lastStatus) {
		return
	}
	s.lastStatus = b
	s.notify(MethodStatus, json.RawMessage(b))
}

// placeholderStatus stands in for the agent's status while there is no
// agent: the chip without a size, the reason in the tooltip.
func placeholderStatus(level, tooltip string) agent.Status {
	return agent.Status{Text: "ctx –", Tooltip: tooltip, Level: level, WindowSource: llm.SourceNone}
}
