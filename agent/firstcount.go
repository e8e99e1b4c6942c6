package agent

import (
	"context"
	"errors"

	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// countFirst counts the next request whole with the engine when no engine
// has reported on a request of this session yet (its first request): the
// tool definitions and the chat template are then only estimated, and the
// first status and warning would be off by their size. The difference
// from the estimate becomes the fixed part of the request, which the
// engine's report of it settles as usual. A failure leaves the estimate.
// It reports whether it counted.
func (a *Agent) countFirst(ctx context.Context, m *ctxwin.Manager) bool {
	st := m.State()
	if st.Estimator == nil || st.Estimator.Fixed > 0 {
		return false
	}
	a.mu.Lock()
	pc, ok := a.eng.model.(llm.PromptCounter)
	a.mu.Unlock()
	if !ok {
		return false
	}
	n, err := pc.CountPrompt(ctx, &llm.Request{Messages: m.H.Messages(), Tools: m.H.Tools})
	if err != nil || n <= 0 {
		if err != nil && !errors.Is(err, llm.ErrNoTokenizer) && !unreachable(err) && ctx.Err() == nil {
			a.eng.countFailed.Do(func() {
				a.logf("reika: counting the first request with the engine failed, so its tool definitions are estimated: %v", err)
			})
		}
		return false
	}
	fixed := m.Prices().ToolTokens(m.H.Tools, false)
	st.Estimator.Fixed = max(fixed+n-m.Gauge().Size(), 1)
	m.Restore(ctxwin.State{Estimator: st.Estimator})
	return true
}
