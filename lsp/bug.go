package lsp

import (
	"runtime/debug"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/internal/bug"
)

// reportBug reports a panic recovered while doing where (called from the
// deferred function that recovered it, so that the stack is the panic's):
// the report file under the state directory (internal/bug), a log line,
// and one window/showMessage that names the file. The caller answers its
// request or ends its turn with the report as the error.
func (s *server) reportBug(where string, v any) *bug.Report {
	dir := s.cfg.StateDir
	if dir == "" {
		dir = agent.StateDir()
	}
	r := bug.Write(bug.Dir(dir), where, v, debug.Stack())
	s.logf("lsp: BUG: %v", r)
	if r.Path == "" {
		s.logf("lsp: the stack of the bug above:\n%s", debug.Stack())
	}
	s.showMessage(agent.LevelError, "Reika: "+r.Error())
	return r
}
