package main

import (
	"errors"

	"github.com/reika-lsp/reika-lsp/agent"
)

// newAgent builds the workspace's agent for the language server: the
// engine client (agent/engine) as opts.Model, then the agent itself.
//
// Placeholder: the agent and the engine client are built on other
// branches; the lead replaces this file when merging them. Until then the
// server runs without an agent, and its status says so.
func newAgent(opts agent.Options) (agent.Service, error) {
	return nil, errors.New("the agent is not wired into this build yet")
}
