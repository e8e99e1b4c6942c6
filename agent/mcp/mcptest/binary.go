package mcptest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// ServerPackage is the stdio test server's package.
const ServerPackage = "github.com/reika-lsp/reika-lsp/agent/mcp/mcptest/cmd/mcptestserver"

var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// Build builds the stdio test server (cmd/mcptestserver) with go build,
// once per process, and returns its path; a test binary that uses it calls
// Remove when its tests end (in TestMain).
func Build() (string, error) {
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "mcptestserver-")
		if built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "mcptestserver")
		if out, err := exec.Command("go", "build", "-o", built.path, ServerPackage).CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build %s: %v\n%s", ServerPackage, err, out)
		}
	})
	return built.path, built.err
}

// Binary is Build for a test: it fails tb when the build fails.
func Binary(tb testing.TB) string {
	tb.Helper()
	p, err := Build()
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// Remove deletes what Binary built.
func Remove() {
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
}
