package agent

import "github.com/reika-lsp/reika-lsp/outline"

// newRepoMap builds the repo map of package outline for a workspace.
var newRepoMap = func(root string) repoMapper { return outline.NewRepoMap(root) }
