package main

import (
	"bytes"
	"strings"
	"testing"
)

// A language client appends its transport flags to the command it starts:
// vscode-languageclient adds --stdio to an executable started with
// TransportKind.stdio (and --clientProcessId=N to the servers it forks).
// The binary must serve with them, as `reika-lsp` and as `reika-lsp serve`.
func TestServeAcceptsLanguageClientFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--stdio"},
		{"serve", "--stdio"},
		{"serve", "--stdio", "--clientProcessId=4242"},
		{"--clientProcessId=4242", "--stdio"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			p := startServer(t, args...)
			p.initialize()
			if err := p.c.Call(p.ctx, "shutdown", nil, nil); err != nil {
				t.Fatalf("shutdown: %v", err)
			}
			p.c.Notify(p.ctx, "exit", nil)
			if code := p.exitCode(); code != 0 {
				t.Errorf("exit status %d, want 0; stderr:\n%s", code, p.stderr)
			}
			p.checkStdoutIsFrames()
		})
	}
}

// The other transports a client can ask for are refused with a message
// that says what to do, before anything is served.
func TestServeRefusesOtherTransports(t *testing.T) {
	for _, args := range [][]string{
		{"--pipe=/tmp/reika.sock"},
		{"serve", "--socket=5007"},
		{"serve", "--node-ipc"},
	} {
		var stdout, stderr bytes.Buffer
		if code := dispatch(args, &stdout, &stderr); code != 2 {
			t.Errorf("%v: status %d, want 2", args, code)
		}
		if stdout.Len() != 0 || !strings.Contains(stderr.String(), "only stdio is supported") {
			t.Errorf("%v: stdout %q, stderr %q", args, stdout.String(), stderr.String())
		}
	}
}
