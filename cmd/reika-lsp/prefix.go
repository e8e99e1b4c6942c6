package main

import "github.com/reika-lsp/reika-lsp/ctxwin"

// fixedPrefixTokens estimates the fixed prefix of a request for the window
// picture: the repo map budget at four characters a token, plus the
// system prompt and tool definitions.
func fixedPrefixTokens(b ctxwin.Budget) int {
	return b.RepoMapChars/4 + systemAndToolsTokens
}

// systemAndToolsTokens is the size of the system prompt and the tool
// definitions at four characters a token.
var systemAndToolsTokens = 1500
