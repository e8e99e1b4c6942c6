package agent

import (
	"context"
	"sync"
	"time"

	"github.com/reika-lsp/reika-lsp/agent/llm"
)

// engineState is what the agent knows of the engine and its model, and
// the discovery that asks it (discovery.go). Guarded by Agent.mu, but for
// the sync values, which guard themselves.
type engineState struct {
	model   llm.Model      // the model requests go to
	info    *llm.ModelInfo // what Info said; nil until the engine answers
	failure string         // why the engine is down or the last turn failed
	loading bool           // the engine is loading its model (loading.go)
	down    bool           // a request waits for an engine that is down

	stopDiscovery context.CancelFunc // stops the discovery running
	retryBase     time.Duration      // discovery's first wait between attempts
	discovering   sync.WaitGroup     // the discovery running, so that Close waits for it

	countFailed sync.Once // logs the first failure to count tokens
	reuseWarned sync.Once // says once that the engine cannot reuse chunks
}

// knownInfo is what is known of the model before the engine answers: its
// answer when there is one, else the window setting.
func (a *Agent) knownInfo() llm.ModelInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.eng.info != nil {
		return *a.eng.info
	}
	if a.set.ContextWindow > 0 {
		return llm.ModelInfo{Model: a.set.Model, Window: a.set.ContextWindow, WindowSource: llm.SourceSetting}
	}
	return llm.ModelInfo{Model: a.set.Model, WindowSource: llm.SourceNone}
}

// modelInfo is what the engine says, asked again while it has not
// answered.
func (a *Agent) modelInfo(ctx context.Context) (llm.ModelInfo, error) {
	a.mu.Lock()
	info, model := a.eng.info, a.eng.model
	a.mu.Unlock()
	if info != nil {
		return *info, nil
	}
	got, err := model.Info(ctx)
	if err != nil {
		return got, err
	}
	a.adopt(model, got)
	return got, nil
}
