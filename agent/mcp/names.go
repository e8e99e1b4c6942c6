package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxNameLen is the longest tool name engines take (OpenAI's function
// names: [a-zA-Z0-9_-]{1,64}).
const MaxNameLen = 64

// Prefix opens the name of every MCP tool: mcp__SERVER__TOOL, as Claude
// Code names them. No tool of the agent's own starts with it.
const Prefix = "mcp__"

// namer gives each server's tools their names in the request, unique and
// within the engine's alphabet and length. The first tool (in the order
// tools are named: servers by name, their tools by name) to take a name
// keeps it; a later one whose name came out the same takes a suffix of
// its own hash, so the names never depend on timing.
type namer struct{ taken map[string]bool }

func newNamer(reserved []string) *namer {
	n := &namer{taken: map[string]bool{}}
	for _, r := range reserved {
		n.taken[r] = true
	}
	return n
}

// name is the tool's name: mcp__SERVER__TOOL with every character outside
// [a-zA-Z0-9_-] made '_', cut to MaxNameLen with a hash suffix, and made
// unique with one.
func (n *namer) name(server, tool string) string {
	full := Prefix + sanitize(server) + "__" + sanitize(tool)
	if len(full) > MaxNameLen || n.taken[full] {
		full = withHash(full, server, tool)
	}
	for i := 0; n.taken[full]; i++ {
		// Two tools whose hashes agree in 8 hex digits: vanishingly rare,
		// but the name must still be unique.
		full = withHash(full, server, tool+strings.Repeat("\x00", i+1))
	}
	n.taken[full] = true
	return full
}

// withHash cuts base to leave room for "_" and 8 hex digits of the hash of
// the server and tool names as the server gave them.
func withHash(base, server, tool string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	suffix := "_" + hex.EncodeToString(sum[:4])
	if len(base) > MaxNameLen-len(suffix) {
		base = base[:MaxNameLen-len(suffix)]
	}
	return base + suffix
}

// sanitize maps every character outside [a-zA-Z0-9_-] to '_'.
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}
