package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
)

// TestTerminalShowsControlCharactersAsEscapes prints what a command, the
// model and a note could use to rewrite the terminal (an escape that
// clears the line, a carriage return, a bidi override): each shows as an
// escape instead of acting.
func TestTerminalShowsControlCharactersAsEscapes(t *testing.T) {
	var out, errOut bytes.Buffer
	term := &terminal{out: &out, err: &errOut}
	hostile := "ok\x1b[2K\rrm -rf ~ \u202e"
	for _, e := range []agent.Event{
		{Kind: agent.EventAssistant, Text: hostile, Delta: true},
		{Kind: agent.EventAssistant, Text: hostile},
		{Kind: agent.EventToolCall, Tool: "bash", Args: []byte(`{"command":"x"}`)},
		{Kind: agent.EventToolResult, Text: hostile},
		{Kind: agent.EventNote, Text: hostile},
		{Kind: agent.EventInfo, Text: hostile},
		{Kind: agent.EventError, Text: hostile},
	} {
		term.Transcript(e)
	}
	all := out.String() + errOut.String()
	if strings.ContainsAny(all, "\x1b\r\u202e") {
		t.Errorf("the terminal got control characters:\n%q", all)
	}
	if n := strings.Count(all, `\x1b[2K`); n != 5 {
		t.Errorf("%d escaped escapes, want 5 (reply, result, note, info, error):\n%q", n, all)
	}
}
