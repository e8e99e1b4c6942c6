package lsp

import (
	"testing"

	"github.com/reika-lsp/reika-lsp/internal/deptest"
)

// docs/design.md §1: lsp imports agent and go.lsp.dev; the engine client and
// go-openai stay behind llm.Model, wired in by cmd.
func TestDependencyDirection(t *testing.T) {
	deptest.Forbid(t, ".",
		"github.com/sashabaranov/go-openai",
		"github.com/reika-lsp/reika-lsp/agent/engine",
		"github.com/reika-lsp/reika-lsp/agent/enginetest",
		"github.com/reika-lsp/reika-lsp/cmd",
	)
	// The editor's side of an approval is agent/approval; the tools stay
	// behind the agent.
	deptest.ForbidDirect(t, ".", "github.com/reika-lsp/reika-lsp/agent/tools")
	// The test client knows the protocol, not the agent.
	deptest.Forbid(t, "./lsptest", "github.com/reika-lsp/reika-lsp/agent")
	// The test support (the client, the scripted agent, the server over
	// it) stays out of the server and of the production binary.
	for _, pkg := range []string{".", "github.com/reika-lsp/reika-lsp/cmd/reika-lsp"} {
		deptest.Forbid(t, pkg, "github.com/reika-lsp/reika-lsp/lsp/lsptest")
	}
}
