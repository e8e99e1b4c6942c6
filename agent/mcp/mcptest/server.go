// Package mcptest is an MCP server for tests, built on the SDK's server
// side: over stdio (cmd/mcptestserver) or streamable HTTP (Handler).
//
// Its tools: echo (says back its text), image (returns a small PNG with a
// line of text), slow (waits until cancelled), add (adds the tool extra,
// so the server says its tools changed) and exit (ends the process).
package mcptest

import (
	"context"
	"net/http"
	"os"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// EchoIn is the arguments of echo.
type EchoIn struct {
	Text string `json:"text" jsonschema:"the text to say back"`
}

// Empty is the arguments of the tools that take none.
type Empty struct{}

// New is the test server.
func New() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "mcptest", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Says the text back."},
		func(_ context.Context, _ *sdk.CallToolRequest, in EchoIn) (*sdk.CallToolResult, any, error) {
			return text("echo: " + in.Text), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "image", Description: "Returns an image and a line of text."},
		func(context.Context, *sdk.CallToolRequest, Empty) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "a picture follows"},
				&sdk.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG\r\n\x1a\nnot really")},
			}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "slow", Description: "Waits until the call is cancelled."},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ Empty) (*sdk.CallToolResult, any, error) {
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	sdk.AddTool(s, &sdk.Tool{Name: "add", Description: "Adds the tool extra."},
		func(context.Context, *sdk.CallToolRequest, Empty) (*sdk.CallToolResult, any, error) {
			sdk.AddTool(s, &sdk.Tool{Name: "extra", Description: "A tool added while the server runs."},
				func(context.Context, *sdk.CallToolRequest, Empty) (*sdk.CallToolResult, any, error) {
					return text("extra ran"), nil, nil
				})
			// The SDK sends the change 10ms after it; the result follows
			// it, so a client has the change when it has the result.
			time.Sleep(200 * time.Millisecond)
			return text("added extra"), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "exit", Description: "Ends the server's process."},
		func(context.Context, *sdk.CallToolRequest, Empty) (*sdk.CallToolResult, any, error) {
			os.Exit(3)
			return nil, nil, nil
		})
	return s
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

// Handler serves the test server over streamable HTTP. Requests without
// the header want (when not empty, "Name: value") are refused.
func Handler(want string) http.Handler {
	s := New()
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	if want == "" {
		return h
	}
	name, value, _ := strings.Cut(want, ":")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(strings.TrimSpace(name)) != strings.TrimSpace(value) {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
