package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/reika-lsp/reika-lsp/lsp"
)

func init() {
	register(command{name: "serve", summary: "serve the Language Server Protocol over stdio (the default)", run: runServe})
}

// runServe serves LSP on stdin and stdout until the client leaves. The
// exit notification ends the process from inside the server (status 0
// after shutdown, 1 otherwise); the end of stdin returns here with the
// same rule.
//
// It takes the flags a language client appends for a server it starts
// over stdio: vscode-languageclient adds --stdio, and --clientProcessId=N
// for servers it forks, so both are accepted (stdio is the only transport,
// and the server ends with its stdin, not by watching the editor's pid).
// The other transports those clients can ask for are refused by name.
func runServe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Bool("stdio", false, "serve over stdin and stdout (the default and only transport)")
	fs.String("clientProcessId", "", "the editor's process id (accepted and ignored)")
	pipe := fs.String("pipe", "", "not supported: reika-lsp serves over stdio only")
	socket := fs.String("socket", "", "not supported: reika-lsp serves over stdio only")
	nodeIPC := fs.Bool("node-ipc", false, "not supported: reika-lsp serves over stdio only")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: reika-lsp [serve] [--stdio]")
		fmt.Fprintln(stderr, "\nServes the Language Server Protocol on stdin and stdout; logs go to stderr.")
		fmt.Fprintln(stderr, "Settings come from the editor (initializationOptions {\"reika\": {...}}),")
		fmt.Fprintln(stderr, "REIKA_* environment variables and the config file's active profile.")
		fmt.Fprintln(stderr, "--stdio and --clientProcessId=N, which language clients append, are accepted.")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "reika-lsp serve: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	if *pipe != "" || *socket != "" || *nodeIPC {
		fmt.Fprintln(stderr, "reika-lsp serve: only stdio is supported: start reika-lsp with transport stdio (--stdio)")
		return 2
	}
	logger := log.New(stderr, "", log.LstdFlags|log.Lmicroseconds)
	// stdout carries the protocol and nothing else: anything that prints
	// to os.Stdout from here on goes to stderr instead.
	os.Stdout = os.Stderr

	err := lsp.Serve(context.Background(), stdio{in: os.Stdin, out: stdout}, lsp.Config{
		NewAgent: newAgent,
		Logf:     logger.Printf,
		Version:  version,
		Exit:     os.Exit,
	})
	if err != nil {
		logger.Printf("reika-lsp: %v", err)
		return 1
	}
	return 0
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
