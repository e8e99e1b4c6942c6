package agent

import (
	"strings"

	"github.com/reika-lsp/reika-lsp/agent/llm"
)

// While the engine loads its model (llama-server answers 503 "Loading
// model"), the Model waits for it (LoadWatcher) and the agent says so: the
// status text gains LoadingText, its tooltip says why nothing happens yet,
// and one info notice is sent.

// LoadingText is appended to the status text while the engine loads its
// model.
const LoadingText = "engine loading the model"

const (
	loadingSuffix  = " · " + LoadingText
	loadingTooltip = "The engine is loading its model: Reika waits for it and carries on when it answers.\n\n"
)

// watchLoading hooks the agent to a model that reports loading.
func (a *Agent) watchLoading(m llm.Model) {
	if w, ok := m.(llm.LoadWatcher); ok {
		w.WatchLoading(a.engineLoading)
	}
}

// engineLoading is told when the engine starts and stops loading.
func (a *Agent) engineLoading(loading bool) {
	a.mu.Lock()
	a.loading = loading
	if !loading {
		delete(a.noticed, "loading")
	}
	a.mu.Unlock()
	if loading {
		a.notice("loading", LevelInfo, "The engine is loading its model; Reika waits for it.")
	}
	a.publishStatus(nil)
}

// applyLoading marks st while the engine loads, and unmarks it after. The
// caller holds a.mu.
func (a *Agent) applyLoading(st *Status) {
	st.Text = strings.TrimSuffix(st.Text, loadingSuffix)
	st.Tooltip = strings.TrimPrefix(st.Tooltip, loadingTooltip)
	if a.loading {
		st.Text += loadingSuffix
		st.Tooltip = loadingTooltip + st.Tooltip
	}
}
