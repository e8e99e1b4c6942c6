package agent

import "github.com/reika-lsp/reika-lsp/outline"

// newRepoMap builds the repo map of package outline for a workspace, with
// its cache in the user's cache directory (outline.DefaultCacheDir): a
// session start of an unchanged workspace reuses the map the last process
// rendered instead of parsing and ranking the tree again.
var newRepoMap = func(root string) repoMapper {
	m := outline.NewRepoMap(root)
	if dir, err := outline.DefaultCacheDir(); err == nil {
		m.SetCacheDir(dir)
	}
	return m
}
