package agent

import (
	"context"
	"time"

	"github.com/reika-lsp/reika-lsp/agent/llm"
)

// Discovery asks the model for its window in the background until the
// engine answers: at start (an editor opened before llama-server has
// loaded its model is the common case) and after a change of endpoint
// that the engine did not answer. Each failure waits twice as long as the
// last, up to discoveryMaxRetry. When the engine answers, the session
// adopts the window and the status is published again, so an "engine
// unreachable" status clears without a new ask. Close stops it and waits.
//
// After a turn found the engine down, the model's discovery may still be
// cached (Info answers without asking the engine): discovery then probes
// the engine first (llm.Prober), and only an answer clears the failure.
// Probes are cheap, so they come at most probeMaxRetry apart: the status
// turns back within seconds of the engine's return.

// probeMaxRetry caps the wait between two probes of an engine that is
// down.
const probeMaxRetry = 5 * time.Second

// startDiscovery starts discovering model's window, after wait, in place
// of any discovery already running; with probe, each try probes the
// engine before asking the model for its info.
func (a *Agent) startDiscovery(model llm.Model, wait time.Duration, probe bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	if a.eng.stopDiscovery != nil {
		a.eng.stopDiscovery()
	}
	ctx, cancel := context.WithCancel(context.Background())
	a.eng.stopDiscovery = cancel
	a.eng.discovering.Add(1)
	go func() {
		defer a.eng.discovering.Done()
		a.discover(ctx, model, wait, probe)
	}()
}

// rediscover looks for the engine again, in the background, after a turn
// found it unreachable: when it answers, the status turns back by itself
// rather than at the next ask.
func (a *Agent) rediscover() {
	wait := a.retryWait()
	a.mu.Lock()
	m := a.eng.model
	a.mu.Unlock()
	a.startDiscovery(m, wait, true)
}

// stopDiscoveryLoop stops the discovery running, if any.
func (a *Agent) stopDiscoveryLoop() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.eng.stopDiscovery != nil {
		a.eng.stopDiscovery()
		a.eng.stopDiscovery = nil
	}
}

// retryWait is discovery's first wait between attempts.
func (a *Agent) retryWait() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.eng.retryBase
}

func (a *Agent) discover(ctx context.Context, model llm.Model, wait time.Duration, probe bool) {
	failures, maxWait := 0, discoveryMaxRetry
	prober, _ := model.(llm.Prober)
	if !probe || prober == nil {
		prober = nil
	} else {
		maxWait = probeMaxRetry
	}
	for {
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		var err error
		if prober != nil {
			err = prober.Probe(ctx)
		}
		var info llm.ModelInfo
		if err == nil {
			info, err = model.Info(ctx)
		}
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			a.adopt(model, info)
			return
		}
		if !a.infoFailed(model, err) {
			return
		}
		failures++
		wait = min(a.retryWait()<<min(failures-1, 16), maxWait)
	}
}

// adopt takes what model's engine said, unless the model was replaced
// meanwhile: the engine is up, its window goes to the session (now when
// it is idle, else at the running turn's next round), and the status says
// so.
func (a *Agent) adopt(model llm.Model, info llm.ModelInfo) {
	a.mu.Lock()
	if a.eng.model != model || a.closed {
		a.mu.Unlock()
		return
	}
	a.eng.info = &info
	a.outdatedLocked()
	a.eng.failure = ""
	delete(a.told.noticed, "engine")
	a.mu.Unlock()
	a.updateIdle()
	if info.Window <= 0 && a.Status().Window == nil {
		reason := info.Reason
		if reason == "" {
			reason = "the engine did not report it"
		}
		a.notice("nowindow", LevelWarning, "No known context window ("+reason+"): nothing will be shed or folded. Set REIKA_CONTEXT_WINDOW.")
	}
}

// infoFailed records that model's engine did not answer; false when the
// model was replaced meanwhile (its discovery should stop).
func (a *Agent) infoFailed(model llm.Model, err error) bool {
	a.mu.Lock()
	if a.eng.model != model || a.closed {
		a.mu.Unlock()
		return false
	}
	a.eng.failure = err.Error()
	a.mu.Unlock()
	a.notice("engine", LevelError, err.Error())
	a.publishStatus(nil)
	return true
}
