package lsp

import (
	"testing"

	"github.com/reika-lsp/reika-lsp/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }
