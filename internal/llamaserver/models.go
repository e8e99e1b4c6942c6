package llamaserver

import (
	"path/filepath"
	"testing"

	"github.com/reika-lsp/reika-lsp/internal/gguf"
)

// RandomModel writes the random model (gguf.Random) into a temporary
// directory of t and returns its path.
func RandomModel(t testing.TB) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "reika-random.gguf")
	if err := gguf.Random(1).WriteFile(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// ToolCallerModel writes a hand-wired tool caller into a temporary
// directory of t and returns its path. Serve it with ToolCallerArgs.
func ToolCallerModel(t testing.TB, tc gguf.ToolCaller) string {
	t.Helper()
	m, err := tc.Model()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "reika-toolcaller.gguf")
	if err := m.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	return p
}
