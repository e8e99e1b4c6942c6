package main

import (
	"time"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/engine"
	"github.com/reika-lsp/reika-lsp/agent/llm"
)

// newAgent builds the workspace's agent for the language server: the
// engine client as its model, logging to the server's log, resuming the
// workspace's last session.
func newAgent(opts agent.Options) (agent.Service, error) {
	newModel := func(s agent.Settings) (llm.Model, error) { return newModel(s, opts.Logf) }
	model, err := newModel(opts.Settings)
	if err != nil {
		return nil, err
	}
	opts.Model = model
	opts.NewModel = newModel
	opts.Resume = true
	opts.MCPConfig = agent.ConfigFilePath()
	return agent.New(opts)
}

// newModel is the engine client for the settings; its log lines
// (discovery, retries, fallbacks, waiting for a loading model) go to logf.
func newModel(s agent.Settings, logf func(string, ...any)) (llm.Model, error) {
	cfg := engineConfig(s)
	cfg.Logf = logf
	c, err := engine.New(cfg)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// engineConfig maps the user's settings (docs/design.md §5) onto the engine
// client's Config: base URL and where it came from, API key, model, context
// window, catalog URL and chunk reuse. The caller adds the HTTP client and
// the logger.
func engineConfig(s agent.Settings) engine.Config {
	// cacheReuse's values are the engine's (engine.CacheReuseAuto and
	// CacheReuseOff are agent's; TestEngineConfig checks "off").
	return engine.Config{BaseURL: s.BaseURL, BaseURLFrom: s.Sources["baseUrl"], APIKey: s.APIKey, Model: s.Model,
		ContextWindow: s.ContextWindow, ModelsURL: s.ModelsURL, CacheReuse: s.CacheReuse, DownWait: downWait(s)}
}

// downWait is the engine client's DownWait for the engineRetry setting:
// its seconds, none (negative) when set to 0, the default when unset.
func downWait(s agent.Settings) time.Duration {
	switch {
	case s.EngineRetry > 0:
		return time.Duration(s.EngineRetry) * time.Second
	case s.Sources["engineRetry"] != "":
		return -1
	}
	return time.Duration(agent.DefaultEngineRetry) * time.Second
}
