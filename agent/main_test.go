package agent_test

import (
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/mcp/mcptest"
	"github.com/reika-lsp/reika-lsp/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m, mcptest.Remove) }
