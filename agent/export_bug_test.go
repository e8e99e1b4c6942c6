package agent

import "github.com/reika-lsp/reika-lsp/ctxwin"

// SetOutliner makes o the outliner of the window of a's session (there is
// one once a turn has run): ctxwin calls it when it sheds a read.
func SetOutliner(a *Agent, o ctxwin.Outliner) {
	a.mu.Lock()
	sess := a.sess
	a.mu.Unlock()
	sess.m.Setup().Outliner(o)
}
