// Package testenv keeps a test binary's caches out of the user's: the
// repo map cache and the engine's slot locks go under $XDG_CACHE_HOME,
// which Main points at a fresh directory, while the llama-server tree the
// real-engine tests fetch stays where it is shared between runs.
package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/reika-lsp/reika-lsp/internal/llamaserver"
)

// Main runs the tests with $XDG_CACHE_HOME in a temporary directory,
// removed after, and $REIKA_CACHE_DIR kept on the shared test cache; then
// it runs cleanups and exits.
func Main(m *testing.M, cleanups ...func()) {
	dir, err := os.MkdirTemp("", "reika-test-cache-")
	if err != nil {
		panic(err)
	}
	if os.Getenv("REIKA_CACHE_DIR") == "" {
		os.Setenv("REIKA_CACHE_DIR", llamaserver.CacheDir())
	}
	// go build, which some tests run, keeps its cache under
	// $XDG_CACHE_HOME by default: keep it where it is, or every run
	// compiles the tests' helpers and their modules from nothing (80 s
	// for the MCP test server on two cores).
	if os.Getenv("GOCACHE") == "" {
		if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil && len(bytes.TrimSpace(out)) > 0 {
			os.Setenv("GOCACHE", string(bytes.TrimSpace(out)))
		}
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	code := m.Run()
	for _, f := range cleanups {
		f()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}
