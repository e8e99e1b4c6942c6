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
	if ap.Kind == "command" || ap.Kind == "outside" || ap.Kind == agent.KindMCPTrust {
		t = protocol.MessageTypeWarning
	}
	actions := []protocol.MessageActionItem{{Title: ActionAllow}, {Title: ActionAllowSession}, {Title: ActionDeny}}
	if ap.Kind == agent.KindMCPTrust {
		actions = []protocol.MessageActionItem{{Title: ActionStartServers}, {Title: ActionNotNow}, {Title: ActionNever}}
	}
	params := &protocol.ShowMessageRequestParams{Type: t, Message: msg, Actions: actions}
	var raw json.RawMessage
	if err := s.call(ctx, protocol.MethodWindowShowMessageRequest, params, &raw); err != nil {
		s.logf("lsp: approval of %q: %v: denied", ap.Summary, err)
		return agent.Deny
	}
	var item struct {
		Title string `json:"title"`
	}
	_ = decodeParams(raw, &item)
	switch {
	case ap.Kind == agent.KindMCPTrust:
		return trustDecision(item.Title)
	case item.Title == ActionAllow:
		return agent.Allow
	case item.Title == ActionAllowSession:
		return agent.AllowSession
	}
	return agent.Deny
}

// trustDecision is the answer to whether to start a workspace's MCP
// servers: Start servers is remembered (Allow), so is Never; Not now, no
// answer or anything else leaves them out this time (Deny).
func trustDecision(title string) agent.Decision {
	switch title {
	case ActionStartServers:
		return agent.Allow
	case ActionNever:
		return agent.Never
	}
	return agent.Deny
}
