package main

import (
	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/engine"
)

// newAgent builds the workspace's agent for the language server: the
// engine client as its model, resuming the workspace's last session.
func newAgent(opts agent.Options) (agent.Service, error) {
	model, err := newModel(opts.Settings)
	if err != nil {
		return nil, err
	}
	opts.Model = model
	opts.NewModel = newModel
	opts.Resume = true
	return agent.New(opts)
}

func newModel(s agent.Settings) (agent.Model, error) {
	c, err := engine.New(engine.ConfigFromSettings(s))
	if err != nil {
		return nil, err
	}
	return c, nil
}
