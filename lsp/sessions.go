package lsp

import (
	"context"
	"errors"

	"github.com/reika-lsp/reika-lsp/agent"
)

// CmdSessions is the session history command (docs/protocol.md §3.9).
const CmdSessions = "reika.sessions"

// sessionsArgs is the argument of reika.sessions.
type sessionsArgs struct {
	Action   string  `json:"action"`
	ID       string  `json:"id"`
	Title    *string `json:"title"`
	MaxChars int     `json:"maxChars"`
}

// sessionsList is the result of the list action.
type sessionsList struct {
	Sessions []agent.SessionInfo `json:"sessions"`
}

const sessionsUsage = `reika.sessions: want [{"action": "list"|"open"|"resume"|"rename"|"delete", "id"?: string, "title"?: string, "maxChars"?: number}]`

// cmdSessions answers reika.sessions: the workspace's sessions listed,
// one opened read-only (a reika.transcript result), resumed (the next ask
// continues it), renamed or deleted. A resume, and the delete of the
// current session, claim the turn slot (turn.go) and are refused while a
// turn runs.
func (s *server) cmdSessions(ctx context.Context, p *executeCommandParams) (any, error) {
	var a sessionsArgs
	if err := optionalObjectArg(p.Arguments, &a); errors.Is(err, errNotAnObject) {
		return nil, invalidParams(sessionsUsage)
	} else if err != nil {
		return nil, invalidParams("reika.sessions: %v", err)
	}
	switch {
	case a.Action != "list" && a.Action != "open" && a.Action != "resume" && a.Action != "rename" && a.Action != "delete":
		return nil, invalidParams("reika.sessions: unknown action %q (%s)", a.Action, sessionsUsage)
	case a.Action != "list" && a.ID == "":
		return nil, invalidParams("reika.sessions: %s needs the session's id", a.Action)
	case a.Action == "rename" && a.Title == nil:
		return nil, invalidParams("reika.sessions: rename needs a title")
	case a.MaxChars < 0:
		return nil, invalidParams("reika.sessions: maxChars must not be negative, got %d", a.MaxChars)
	}
	svc, err := s.agent(ctx)
	if err != nil {
		return nil, err
	}
	var res any = struct{}{}
	switch a.Action {
	case "list":
		var list []agent.SessionInfo
		list, err = svc.Sessions()
		res = sessionsList{list}
	case "open":
		var page agent.TranscriptPage
		page, err = svc.OpenSession(a.ID, a.MaxChars)
		res = page
	case "resume":
		err = s.outsideTurn(ctx, svc, func() error { return svc.ResumeSession(a.ID) })
		res = struct {
			Session string `json:"session"`
		}{a.ID}
	case "rename":
		err = svc.RenameSession(a.ID, *a.Title)
	case "delete":
		if svc.Status().Session != a.ID {
			// Another session than the current one: a running turn does
			// not touch it (the agent refuses the current one's anyway).
			err = svc.DeleteSession(a.ID)
			break
		}
		err = s.outsideTurn(ctx, svc, func() error { return svc.DeleteSession(a.ID) })
	}
	if err != nil {
		return nil, requestFailed("reika.sessions: %s: %v", a.Action, err)
	}
	return jsonResult(res)
}
