package lsp

import (
	"context"
	"encoding/json"

	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/approval"
)

// maxApprovalDetail bounds the diff shown in an approval request of an
// edit; editors show the message in a dialog or a prompt. Anything else (a
// command, a URL, a path) is shown whole: the bash tool never asks to run a
// command longer than approval.TextBytes.
const maxApprovalDetail = 2000

// approver asks the user with window/showMessageRequest (agent.Approver).
// No answer, an error, an unknown action or a client that cannot ask all
// mean Deny.
type approver struct{ s *server }

func (a approver) Approve(ctx context.Context, ap approval.Request) agent.Decision {
	s := a.s
	s.mu.Lock()
	can := s.caps.showMessageRequest
	s.mu.Unlock()
	if !can {
		s.logf("lsp: %q needs approval but the client cannot ask (no window.showMessage capability): denied", ap.Summary)
		return agent.Deny
	}
	msg := "Reika wants to " + approval.Visible(ap.Summary)
	if detail := ap.Detail; detail != "" {
		if ap.Kind == "edit" {
			detail = truncate(detail, maxApprovalDetail)
		}
		msg += "\n\n" + approval.Visible(detail)
	}
	t := protocol.MessageTypeInfo
	if ap.Kind == "command" || ap.Kind == "outside" || ap.Kind == "mcp-trust" {
		t = protocol.MessageTypeWarning
	}
	params := &protocol.ShowMessageRequestParams{Type: t, Message: msg, Actions: []protocol.MessageActionItem{
		{Title: ActionAllow}, {Title: ActionAllowSession}, {Title: ActionDeny},
	}}
	var raw json.RawMessage
	if err := s.call(ctx, protocol.MethodWindowShowMessageRequest, params, &raw); err != nil {
		s.logf("lsp: approval of %q: %v: denied", ap.Summary, err)
		return agent.Deny
	}
	var item struct {
		Title string `json:"title"`
	}
	_ = decodeParams(raw, &item)
	switch item.Title {
	case ActionAllow:
		return agent.Allow
	case ActionAllowSession:
		return agent.AllowSession
	}
	return agent.Deny
}
