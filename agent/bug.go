package agent

import (
	"runtime/debug"

	"github.com/reika-lsp/reika-lsp/internal/bug"
)

// recoverTurn, deferred by runTurn, makes a panic in the turn — in ctxwin
// called from the loop, or anywhere else under it — the turn's error, as
// gopls does with its bugs: the panic and its stack go to a report file
// under the state directory (internal/bug), the user is told in one line
// that names it (an error notice: window/showMessage in the server; the
// result's message, on stderr, in reika-lsp run, which shows no error
// notices), and the agent goes on: the next ask runs.
func (a *Agent) recoverTurn(res *AskResult) {
	v := recover()
	if v == nil {
		return
	}
	r := bug.Write(bug.Dir(a.stateDir), "running a turn", v, debug.Stack())
	if r.Path == "" { // the log (stderr) keeps the stack instead
		a.logf("reika: BUG: %v\n%s", r, debug.Stack())
	}
	a.notice("", LevelError, "Reika: "+r.Error())
	*res = AskResult{Status: AskError, Message: r.Error()}
}
