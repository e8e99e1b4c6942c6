package outline

import (
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/internal/deptest"
)

// TestImports keeps the dependency direction of docs/design.md §1: outline
// imports tree-sitter and, of this module, only internal/walk and
// internal/atomicfile, which are themselves standard-library only (so
// outline still depends on nothing of ours that could depend back on it).
func TestImports(t *testing.T) {
	const self = "github.com/reika-lsp/reika-lsp/outline"
	const walkPkg = "github.com/reika-lsp/reika-lsp/internal/walk"
	const atomicPkg = "github.com/reika-lsp/reika-lsp/internal/atomicfile"
	for _, d := range deptest.Deps(t, ".") {
		switch {
		case d == self, d == walkPkg, d == atomicPkg:
		case d == "github.com/smacker/go-tree-sitter" || strings.HasPrefix(d, "github.com/smacker/go-tree-sitter/"):
		default:
			t.Errorf("outline must import only tree-sitter, internal/walk and internal/atomicfile, not %s", d)
		}
	}
	for _, pkg := range []string{walkPkg, atomicPkg} {
		for _, d := range deptest.Deps(t, pkg) {
			if d != pkg {
				t.Errorf("%s must stay standard-library only (outline relies on it), but imports %s", pkg, d)
			}
		}
	}
	deptest.Forbid(t, ".", "go.lsp.dev", "github.com/sashabaranov/go-openai",
		"github.com/reika-lsp/reika-lsp/agent", "github.com/reika-lsp/reika-lsp/ctxwin", "github.com/reika-lsp/reika-lsp/lsp")
}
