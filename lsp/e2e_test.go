package lsp

import (
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/engine"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/lsp/lsptest/scenario"
)

// TestEndToEndInProcess runs the real agent behind the server, through a
// pipe, against the fake engine (llama.cpp shape, a 16000-token window).
func TestEndToEndInProcess(t *testing.T) {
	srv := enginetest.New(enginetest.Options{Window: 16000})
	defer srv.Close()
	state := t.TempDir()
	h := start(t, harnessOptions{newAgent: func(opts agent.Options) (agent.Service, error) {
		model, err := engine.New(engine.Config{BaseURL: srv.URL(), CacheDir: t.TempDir()})
		if err != nil {
			return nil, err
		}
		opts.Model, opts.StateDir = model, state
		return agent.New(opts)
	}})
	scenario.Run(t, h.ctx, h.c, h.root, srv)
}
