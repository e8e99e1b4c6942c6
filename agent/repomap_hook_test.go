package agent

import "github.com/reika-lsp/reika-lsp/outline"

// RepoMapStats are the figures of the last Render of a's repo map (the
// zero value before the first session start).
func RepoMapStats(a *Agent) outline.MapStats {
	if m, ok := a.repo.m.(*outline.RepoMap); ok {
		return m.Stats()
	}
	return outline.MapStats{}
}
