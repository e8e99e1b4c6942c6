package mcp

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// serverBin is the test server (mcptest/cmd/mcptestserver), built once.
var serverBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcptest-")
	if err != nil {
		panic(err)
	}
	serverBin = filepath.Join(dir, "mcptestserver")
	out, err := exec.Command("go", "build", "-o", serverBin, "./mcptest/cmd/mcptestserver").CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		panic("building the test server: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
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
