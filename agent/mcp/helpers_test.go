package mcp

import (
	"os"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/mcp/mcptest"
)

// serverBin is the test server (mcptest/cmd/mcptestserver), built once.
var serverBin string

func TestMain(m *testing.M) {
	var err error
	if serverBin, err = mcptest.Build(); err != nil {
		mcptest.Remove()
		panic("building the test server: " + err.Error())
	}
	code := m.Run()
	mcptest.Remove()
	os.Exit(code)
}

func testServer(name string, env ...string) Server {
	s := Server{Name: name, Type: TypeStdio, Command: serverBin, From: FromUser}
	if len(env) > 0 {
		s.Env = map[string]string{}
		for i := 0; i+1 < len(env); i += 2 {
			s.Env[env[i]] = env[i+1]
		}
	}
	return s
}

func startSet(t *testing.T, opts Options, servers ...Server) *Set {
	t.Helper()
	s := NewSet(opts)
	s.Start(t.Context(), servers)
	t.Cleanup(s.Close)
	return s
}
