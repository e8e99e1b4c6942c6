// Command mcptestserver is the test MCP server over stdio. With
// MCPTEST_HANG=1 it never answers; with MCPTEST_FAIL=1 it writes a line to
// stderr and exits at once.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reika-lsp/reika-lsp/agent/mcp/mcptest"
)

func main() {
	if os.Getenv("MCPTEST_FAIL") == "1" {
		fmt.Fprintln(os.Stderr, "mcptestserver: failing as asked")
		os.Exit(2)
	}
	if os.Getenv("MCPTEST_HANG") == "1" {
		for {
			time.Sleep(time.Hour)
		}
	}
	if err := mcptest.New().Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "mcptestserver:", err)
		os.Exit(1)
	}
}
