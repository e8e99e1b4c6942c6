package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/reika-lsp/reika-lsp/agent"
)

// prefixSplit is what the fixed prefix of a new session in the working
// directory would hold, part by part (agent.PrefixSplit): the system
// prompt, the tool definitions, the skill list, the instruction files, the
// mode's prompt and the repo map's budget. An MCP server's tools are a
// part each (withMCPParts).
func prefixSplit(window int, s agent.Settings) ([]agent.PrefixPart, error) {
	root, err := os.Getwd()
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return nil, err
	}
	return agent.PrefixSplit(root, window, s)
}

// fixedPrefixTokens estimates the fixed prefix of a request for the window
// picture: its parts at four characters a token.
func fixedPrefixTokens(parts []agent.PrefixPart) int {
	chars := 0
	for _, p := range parts {
		chars += p.Chars
	}
	return chars / 4
}

// printPrefix prints the fixed prefix's split.
func printPrefix(w io.Writer, parts []agent.PrefixPart) {
	fmt.Fprintf(w, "Fixed prefix of a new session here: ~%d tokens at four characters a token\n", fixedPrefixTokens(parts))
	for _, p := range parts {
		line := fmt.Sprintf("  %-15s %7d chars  ~%6d tokens", p.Name, p.Chars, p.Chars/4)
		if p.Note != "" {
			line += "   " + p.Note
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w)
}

// withMCPParts puts the MCP servers' parts right after the tools part.
func withMCPParts(parts, servers []agent.PrefixPart) []agent.PrefixPart {
	var out []agent.PrefixPart
	for _, p := range parts {
		out = append(out, p)
		if p.Name == agent.PartTools {
			out = append(out, servers...)
		}
	}
	return out
}
