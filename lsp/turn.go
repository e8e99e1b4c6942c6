package lsp

import (
	"context"

	"github.com/reika-lsp/reika-lsp/agent"
)

// errTurnRunning answers an ask or a compact while the agent runs a turn.
const errTurnRunning = "a turn is already running: wait for it to end or cancel it (reika.cancel)"

// turn is a running reika.ask or reika.compact.
type turn struct {
	cancel   context.CancelFunc
	progress *workProgress
	done     chan struct{}   // closed when the agent has returned
	result   agent.AskResult // set before done is closed
}
