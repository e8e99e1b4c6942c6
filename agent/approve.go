package agent

import (
	"context"
	"sync"

	"github.com/reika-lsp/reika-lsp/agent/approval"
)

// approvals decides whether a tool call may run: the approve setting first
// (all: everything; edits: file changes), then what the user allowed for
// the session, then the user through the Approver. No approver or no
// answer means deny.
type approvals struct {
	mu      sync.Mutex
	mode    string          // guarded by mu
	allowed map[string]bool // kinds allowed for the session; guarded by mu
	ask     Approver
}

func newApprovals(mode string, ask Approver) *approvals {
	return &approvals{mode: mode, allowed: map[string]bool{}, ask: ask}
}

func (a *approvals) setMode(mode string) {
	a.mu.Lock()
	a.mode = mode
	a.mu.Unlock()
}

// reset forgets what was allowed for the session.
func (a *approvals) reset() {
	a.mu.Lock()
	a.allowed = map[string]bool{}
	a.mu.Unlock()
}

// wouldAsk reports whether a call of kind would be put to the user.
func (a *approvals) wouldAsk(kind string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return !a.allowedLocked(kind)
}

// allowedLocked reports whether calls of kind run without asking.
func (a *approvals) allowedLocked(kind string) bool {
	switch {
	case a.mode == ApproveAll && kind != "outside":
		return true
	case a.mode == ApproveEdits && kind == "edit":
		return true
	}
	return a.allowed[kind]
}

func (a *approvals) approve(ctx context.Context, req approval.Request) bool {
	a.mu.Lock()
	allowed := a.allowedLocked(req.Kind)
	a.mu.Unlock()
	switch {
	case allowed:
		return true
	case a.ask == nil:
		return false
	}
	switch a.ask.Approve(ctx, req) {
	case Allow:
		return true
	case AllowSession:
		a.mu.Lock()
		a.allowed[req.Kind] = true
		a.mu.Unlock()
		return true
	}
	return false
}
