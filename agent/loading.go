package agent

import (
	"strings"

	"github.com/reika-lsp/reika-lsp/agent/llm"
)

// While the engine loads its model (llama-server answers 503 "Loading
// model"), the Model waits for it (LoadWatcher) and the agent says so: the
// status text gains LoadingText, its tooltip says why nothing happens yet,
// and one info notice is sent.

//
// Likewise while a request waits for an engine that stopped answering
// (llm.DownWatcher: refused, dropped, 502/503/504): the status text gains
// DownText, its level is an error, its tooltip says what Reika does, and
// one info notice is sent; the turn goes on when the engine answers.

// LoadingText is appended to the status text while the engine loads its
// model.
const LoadingText = "engine loading the model"

// DownText is appended to the status text while a request waits for an
// engine that does not answer.
const DownText = "engine unreachable, retrying"

const (
	loadingSuffix  = " · " + LoadingText
	loadingTooltip = "The engine is loading its model: Reika waits for it and carries on when it answers.\n\n"
	downSuffix     = " · " + DownText
	downTooltip    = "The engine does not answer: Reika asks it again (up to the engineRetry setting) and carries on when it is back.\n\n"
)

// watchLoading hooks the agent to a model that reports loading, or
// waiting for an engine that is down.
func (a *Agent) watchLoading(m llm.Model) {
	if w, ok := m.(llm.LoadWatcher); ok {
		w.WatchLoading(a.engineLoading)
	}
	if w, ok := m.(llm.DownWatcher); ok {
		w.WatchDown(a.engineDown)
	}
}

// engineDown is told when a request starts and stops waiting for the
// engine.
func (a *Agent) engineDown(down bool) {
	a.engineWaits(&a.eng.down, down, "down", "The engine does not answer; Reika retries and carries on when it is back.")
}

// engineLoading is told when the engine starts and stops loading.
func (a *Agent) engineLoading(loading bool) {
	a.engineWaits(&a.eng.loading, loading, "loading", "The engine is loading its model; Reika waits for it.")
}

// engineWaits sets one of the agent's waits for the engine (*flag, guarded
// by mu), says so once when it starts (notice key), and publishes the
// status.
func (a *Agent) engineWaits(flag *bool, on bool, key, text string) {
	a.mu.Lock()
	*flag = on
	if !on {
		delete(a.told.noticed, key)
	}
	a.mu.Unlock()
	if on {
		a.notice(key, LevelInfo, text)
	}
	a.publishStatus(nil)
}

// applyLoading marks st while the engine loads or a request waits for it,
// and unmarks it after. The caller holds a.mu.
func (a *Agent) applyLoading(st *Status) {
	st.Text = strings.TrimSuffix(strings.TrimSuffix(st.Text, downSuffix), loadingSuffix)
	st.Tooltip = strings.TrimPrefix(strings.TrimPrefix(st.Tooltip, downTooltip), loadingTooltip)
	if a.eng.loading {
		st.Text += loadingSuffix
		st.Tooltip = loadingTooltip + st.Tooltip
	}
	if a.eng.down {
		st.Text += downSuffix
		st.Tooltip = downTooltip + st.Tooltip
		st.Level = LevelError
	}
}
