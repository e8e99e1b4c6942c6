package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// resultText is what the model sees of a call's result: the text contents
// joined, every other content (an image, audio, a resource) as one line
// saying what it was, and the structured content as JSON when there is
// nothing else.
func resultText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		parts = append(parts, contentText(c))
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n")
}

// contentText is one content of a result as text.
func contentText(c sdk.Content) string {
	switch c := c.(type) {
	case *sdk.TextContent:
		return c.Text
	case *sdk.ImageContent:
		return fmt.Sprintf("[image: %s, %s, not shown]", orUnknown(c.MIMEType), size(len(c.Data)))
	case *sdk.AudioContent:
		return fmt.Sprintf("[audio: %s, %s, not shown]", orUnknown(c.MIMEType), size(len(c.Data)))
	case *sdk.ResourceLink:
		return fmt.Sprintf("[resource link: %s %s]", c.Name, c.URI)
	case *sdk.EmbeddedResource:
		if c.Resource == nil {
			return "[resource]"
		}
		n := len(c.Resource.Text) + len(c.Resource.Blob)
		return fmt.Sprintf("[resource: %s, %s, %s, not shown]", c.Resource.URI, orUnknown(c.Resource.MIMEType), size(n))
	default:
		return fmt.Sprintf("[%T content, not shown]", c)
	}
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}

func size(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/1024)
}

// toResult is a call's result for the history. Its summary, what a shed
// keeps besides the first line, names the tool and what it was given.
func toResult(name, args string, res *sdk.CallToolResult) ctxwin.Result {
	text := resultText(res)
	if res.IsError && !strings.HasPrefix(text, "Error") {
		text = "Error: " + text
	}
	lines := strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
	if text == "" {
		text, lines = "(no output)", 0
	}
	status := fmt.Sprintf("%d lines", lines)
	if lines == 1 {
		status = "1 line"
	}
	if res.IsError {
		status = "error, " + status
	}
	return ctxwin.Result{Kind: name, Text: text, IsError: res.IsError, Summary: fmt.Sprintf("%s %s: %s", name, cut(args, 80), status)}
}

// errorResult is a call that failed before the server answered.
func errorResult(name, format string, args ...any) ctxwin.Result {
	msg := fmt.Sprintf(format, args...)
	return ctxwin.Result{Kind: name, Text: "Error: " + msg, IsError: true, Summary: name + ": " + cut(msg, 80)}
}

// cut shortens s to at most n bytes on a rune boundary, on one line.
func cut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
