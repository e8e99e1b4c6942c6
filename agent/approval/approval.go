// Package approval is what a tool call waiting for the user's consent looks
// like to the front ends that ask (the editor's dialog, the terminal of
// `reika-lsp run`), and how its text is shown so that nothing in it can hide
// what runs. It imports only the standard library.
package approval

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// What an approval shows is what runs.
//
// A command is approved on its whole text: a front end shows Detail whole,
// never cut, and the bash tool refuses, without asking, a command longer
// than TextBytes, which no dialog shows in full. A diff longer than
// DetailBytes is cut, with a line saying so. Visible renders a
// Detail for display so that nothing in it can hide what it says.

// Request describes a tool call waiting for the user's consent.
type Request struct {
	Tool    string // tool name
	Kind    string // "edit", "command", "fetch", "outside", "mcp:" + an MCP tool's name, or "mcp-trust"
	Summary string // one line: "edit src/a.go", "run `rm -rf build`"
	Detail  string // the diff, the command, the URL
}

// TextBytes is the longest command the bash tool asks to run.
const TextBytes = 4000

// DetailBytes caps the diff shown with an approval request.
const DetailBytes = 64 << 10

// Visible renders text for an approval dialog or a terminal: control
// characters other than newline and tab, and the invisible and
// direction-changing characters of Unicode (zero-width spaces, bidi
// overrides and isolates, the BOM), are shown as escapes (\x1b,
// <U+202E>), so that a terminal cannot move the cursor or a dialog reorder
// the text over what really runs. Invalid UTF-8 bytes are shown as \xNN.
func Visible(text string) string {
	var b strings.Builder
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, text[i])
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r < 0xa0, hidden(r):
			fmt.Fprintf(&b, "<U+%04X>", r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}

// hidden reports whether r changes how text around it reads without
// showing itself.
func hidden(r rune) bool {
	switch {
	case r >= 0x200b && r <= 0x200f, // zero-width space, joiners, LRM, RLM
		r >= 0x202a && r <= 0x202e, // bidi embeddings and overrides
		r >= 0x2066 && r <= 0x2069, // bidi isolates
		r == 0x061c, r == 0xfeff, r == 0x2060, r == 0x00ad:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}
