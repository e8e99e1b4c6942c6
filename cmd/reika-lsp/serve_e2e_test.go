package main

import (
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/lsp/lsptest/scenario"
)

// TestServeEndToEnd runs the built binary over stdio against the fake
// engine (llama.cpp shape, a 16000-token window), as an editor would.
func TestServeEndToEnd(t *testing.T) {
	srv := enginetest.New(enginetest.Options{Window: 16000})
	defer srv.Close()
	p := startServerWith(t, serverOptions{env: []string{"REIKA_BASE_URL=" + srv.URL()}}, "serve")
	scenario.Run(t, p.ctx, p.c, p.root, srv)
	p.c.Notify(p.ctx, "exit", nil)
	if code := p.exitCode(); code != 0 {
		t.Errorf("exit after shutdown: status %d", code)
	}
	p.checkStdoutIsFrames()
}
