package lsp

import (
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
