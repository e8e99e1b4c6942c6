package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/reika-lsp/reika-lsp/outline"
)

func init() {
	register(command{name: "outline", summary: "print the outline a shed read keeps of source files", run: runOutline})
}

func runOutline(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("outline", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print one JSON array of entries per file, one line each, in argument order\n(null for a file that could not be read)")
	budget := fs.Int("budget", outline.DefaultSummaryBudget, "characters per file outline; 0 for no limit (text output only)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: reika-lsp outline [--json] [--budget N] FILE...")
		fmt.Fprintln(stderr, "\nPrints each file's top-level declarations with their line ranges, as the summary")
		fmt.Fprintln(stderr, "of a shed file read keeps them. Exit status 1 when a file is missing or binary.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	files, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(files) == 0 {
		fs.Usage()
		return 2
	}
	status := 0
	for i, path := range files {
		o, err := readOutline(path)
		var entries []outline.Entry
		switch {
		case err == nil:
			entries = o.Entries
		case errors.Is(err, outline.ErrNoOutline):
			// Not an error: the language is just not one outline knows.
			if !*asJSON {
				fmt.Fprintf(stdout, "%s== %s\n(no outline for this file type)\n", sep(i), path)
			}
		default:
			fmt.Fprintf(stderr, "reika-lsp outline: %v\n", err)
			status = 1
			if *asJSON {
				fmt.Fprintln(stdout, "null")
			}
			continue
		}
		if *asJSON {
			data, err := json.Marshal(nonNil(entries))
			if err != nil {
				fmt.Fprintf(stderr, "reika-lsp outline: %s: %v\n", path, err)
				return 1
			}
			fmt.Fprintf(stdout, "%s\n", data)
			continue
		}
		if o != nil {
			printOutline(stdout, sep(i), path, o, *budget)
		}
	}
	return status
}

// printOutline prints one file's outline as text within budget
// characters, after a separator.
func printOutline(w io.Writer, sep, path string, o *outline.Outline, budget int) {
	fmt.Fprintf(w, "%s== %s (%s, %d lines)\n", sep, path, o.Lang, o.Lines)
	if r := o.Render(budget); r != "" {
		fmt.Fprintln(w, r)
	} else {
		fmt.Fprintln(w, "(no declarations)")
	}
}

func sep(i int) string {
	if i == 0 {
		return ""
	}
	return "\n"
}

// readOutline reads and parses one file; a directory or a missing file is an
// error that names the path.
func readOutline(path string) (*outline.Outline, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s: is a directory", path)
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return outline.Parse(path, src)
}

// nonNil makes every Children slice non-nil, so JSON has [] and not null.
func nonNil(es []outline.Entry) []outline.Entry {
	out := make([]outline.Entry, len(es))
	for i, e := range es {
		e.Children = nonNil(e.Children)
		out[i] = e
	}
	return out
}

// parseInterleaved parses flags that may come before, between or after the
// positional arguments; "--" ends the flags.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
