package main

import (
	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// fixedPrefixTokens estimates the fixed prefix of a request for the window
// picture: the system prompt, the tool definitions and the repo map budget,
// at four characters a token.
func fixedPrefixTokens(b ctxwin.Budget) int {
	return (agent.BasePrefixChars() + b.RepoMapChars) / 4
}
