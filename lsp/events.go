package lsp

import (
	"bytes"
	"encoding/json"

	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika-lsp/agent"
)

// events is where the agent shows what it does (agent.Events): the
// transcript and status notifications, window/showMessage, and $/progress
// of the running turn. The agent calls it from its own goroutines; each
// call writes one message to the client.
type events struct{ s *server }

func (e events) Transcript(ev agent.Event) { e.s.notifyJSON(MethodTranscript, ev) }

func (e events) Status(st agent.Status) { e.s.sendStatus(st, false) }

func (e events) Notice(n agent.Notice) { e.s.showMessage(n.Level, n.Text) }

func (e events) Progress(p agent.Progress) { e.s.reportProgress(p.Text) }

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

// showMessage sends window/showMessage at a notice level ("info",
// "warning" or "error").
func (s *server) showMessage(level, text string) {
	t := protocol.MessageTypeInfo
	switch level {
	case agent.LevelError:
		t = protocol.MessageTypeError
	case agent.LevelWarning:
		t = protocol.MessageTypeWarning
	}
	s.notify(protocol.MethodWindowShowMessage, &protocol.ShowMessageParams{Type: t, Message: text})
}
