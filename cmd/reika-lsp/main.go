// Command reika-lsp is a language server that runs an LLM coding agent for
// the editor, and a few subcommands to inspect what it does.
//
//	reika-lsp [serve] [--stdio]  the language server over stdio
//	reika-lsp window [flags]     how the context window is divided
//	reika-lsp help               the subcommands
//
// Run `reika-lsp help` for the full list.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
)

// version is set by -ldflags "-X main.version=..." in release builds.
var version = "dev"

// A command is one subcommand. run returns the process exit status:
// 0 success, 1 failure, 2 bad usage.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]command{}

// register adds a subcommand; each lives in a file of its own.
func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("duplicate command " + c.name)
	}
	commands[c.name] = c
}

func init() {
	register(command{name: "version", summary: "print the version", run: func(_ []string, stdout, _ io.Writer) int {
		fmt.Fprintln(stdout, "reika-lsp", version)
		return 0
	}})
	register(command{name: "help", summary: "list the subcommands", run: func(_ []string, stdout, _ io.Writer) int {
		usage(stdout)
		return 0
	}})
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: reika-lsp [command] [flags]")
	fmt.Fprintln(w, "\nWith no command, reika-lsp serves the Language Server Protocol over stdio.")
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'reika-lsp COMMAND -h' for a command's flags.")
}

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	name := "serve"
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--help":
			usage(stdout)
			return 0
		case "-version", "--version":
			name = "version"
			args = args[1:]
		default:
			if len(args[0]) > 0 && args[0][0] != '-' {
				name, args = args[0], args[1:]
			}
		}
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "reika-lsp: unknown command %q\n", name)
		usage(stderr)
		return 2
	}
	return c.run(args, stdout, stderr)
}
