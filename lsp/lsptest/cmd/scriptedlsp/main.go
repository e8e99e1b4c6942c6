// Command scriptedlsp is reika-lsp's language server, lsp.Serve itself,
// over a scripted agent (scripted.Agent with the script of script.go)
// instead of one that talks to an engine: the server the Neovim plugin's
// client tests start (editors/nvim/tests/client), so that they test the
// plugin against the real server's side of docs/protocol.md without a model.
//
// It serves LSP on stdin and stdout until the client leaves, as
// `reika-lsp serve` does; `scriptedlsp version` prints what it is. Its
// settings come from the editor alone: the environment and the config file
// are not read.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/reika-lsp/reika-lsp/lsp"
)

// version is what `scriptedlsp version` prints and initialize reports.
const version = "scriptedlsp (reika-lsp's server over a scripted agent, for tests)"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "version" {
		fmt.Println(version)
		return
	}
	logger := log.New(os.Stderr, "scriptedlsp: ", log.LstdFlags|log.Lmicroseconds)
	if err := lsp.Serve(context.Background(), stdio{in: os.Stdin, out: os.Stdout}, config(logger.Printf)); err != nil {
		logger.Printf("%v", err)
		os.Exit(1)
	}
}

// config is the server's configuration: the scripted agent, settings from
// the editor only, and the exit notification ending the process.
func config(logf func(string, ...any)) lsp.Config {
	return lsp.Config{
		NewAgent:   newAgent,
		Logf:       logf,
		Version:    version,
		Getenv:     func(string) (string, bool) { return "", false },
		ConfigFile: os.DevNull,
	}
}

// stdio is the server's end of the connection: it reads stdin and writes
// stdout.
type stdio struct {
	in  io.ReadCloser
	out io.Writer
}

func (s stdio) Read(p []byte) (int, error)  { return s.in.Read(p) }
func (s stdio) Write(p []byte) (int, error) { return s.out.Write(p) }
func (s stdio) Close() error                { return s.in.Close() }
