package agent

import (
	"fmt"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// noWindowPromptTokens is the window a prompt is measured against when none
// is known: a million tokens.
const noWindowPromptTokens = 1 << 20

// promptFits refuses a prompt (with its attachment) larger than the
// window's worth of bytes at the baseline four characters a token: it can
// never fit, and holding, logging and sending it would cost seconds and a
// gigabyte for nothing.
func promptFits(prompt string, window int) error {
	tokens, what := window, fmt.Sprintf("the %d-token context window", window)
	if window <= 0 {
		tokens, what = noWindowPromptTokens, "a million-token window (no window is known)"
	}
	limit := tokens * int(ctxwin.BaselineCharsPerToken)
	if len(prompt) <= limit {
		return nil
	}
	return fmt.Errorf("the prompt is %s, more than %s can hold (%s at %d characters a token): "+
		"attach a smaller selection, or put the text in a file and ask the agent to read it",
		byteSize(len(prompt)), what, byteSize(limit), int(ctxwin.BaselineCharsPerToken))
}

// byteSize prints n bytes for a person: "812 bytes", "64.0 kB", "52.4 MB".
func byteSize(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d bytes", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
