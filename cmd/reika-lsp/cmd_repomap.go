package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/reika-lsp/reika-lsp/outline"
)

func init() {
	register(command{name: "repomap", summary: "print the repo map of a workspace", run: runRepoMap})
}

func runRepoMap(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("repomap", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var budget optInt
	fs.Var(&budget, "budget", "`N` characters; 0 for no limit (default: $REIKA_REPO_MAP_BUDGET, else 5% of the window)")
	window := fs.Int("window", 0, "context window in tokens the default budget is taken from (default: $REIKA_CONTEXT_WINDOW)")
	stats := fs.Bool("stats", false, "print what the map read and how long it took to stderr")
	cache := fs.Bool("cache", true, "keep the outlines and the map in the user's cache directory, so the next run parses only what changed and ranks nothing when nothing did")
	noCache := fs.Bool("no-cache", false, "neither read nor write the cache (the same as --cache=false)")
	var touches stringList
	fs.Var(&touches, "touch", "a file the session touched, ranked first (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: reika-lsp repomap [--budget N] [--window W] [--touch FILE]... [--no-cache] [DIR]")
		fmt.Fprintln(stderr, "\nPrints the repo map the fixed prefix of every request carries: the workspace's")
		fmt.Fprintln(stderr, "files with their key declarations, the most referenced and most recently touched")
		fmt.Fprintln(stderr, "first, within the budget. DIR defaults to the current directory.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(rest) > 1 {
		fmt.Fprintln(stderr, "reika-lsp repomap: one directory at most")
		fs.Usage()
		return 2
	}
	dir := "."
	if len(rest) == 1 {
		dir = rest[0]
	}
	flagBudget := -1
	if budget.set {
		flagBudget = budget.n
	}
	n, err := mapBudget(flagBudget, *window)
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp repomap: %v\n", err)
		return 2
	}
	m := newRepoMap(dir, *cache && !*noCache, touches, stderr)
	out, err := m.Render(n)
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp repomap: %v\n", err)
		return 1
	}
	if out != "" {
		fmt.Fprintln(stdout, out)
	}
	if *stats {
		printMapStats(stderr, m.Stats(), len(out), n)
	}
	return 0
}

// newRepoMap makes the repo map of dir with the session's touched files,
// in the user's cache directory when cache is on (and one is found).
func newRepoMap(dir string, cache bool, touches []string, stderr io.Writer) *outline.RepoMap {
	m := outline.NewRepoMap(dir)
	if cache {
		cdir, err := outline.DefaultCacheDir()
		if err != nil {
			fmt.Fprintf(stderr, "reika-lsp repomap: no cache: %v\n", err)
		} else {
			m.SetCacheDir(cdir)
		}
	}
	for _, t := range touches {
		m.Touch(t)
	}
	return m
}

// printMapStats prints what rendering a map of chars characters (of a
// budget) read and how long it took.
func printMapStats(w io.Writer, s outline.MapStats, chars, budget int) {
	reused := ""
	if s.Reused {
		reused = ", the map itself from the cache"
	}
	fmt.Fprintf(w, "repomap: %d files, %d read, %d cached, %d generated left out, %d shown, %d of %d characters%s, %v\n",
		s.Files, s.Parsed, s.Cached, s.Skipped, s.Shown, chars, budget, reused, s.Took.Round(1e6))
	if s.CacheErr != nil {
		fmt.Fprintf(w, "repomap: cache not written: %v\n", s.CacheErr)
	}
}

// mapBudget chooses the budget: the flag, else REIKA_REPO_MAP_BUDGET, else
// the 5% rule for the window of the flag or of REIKA_CONTEXT_WINDOW.
func mapBudget(flagBudget, window int) (int, error) {
	if flagBudget >= 0 {
		return flagBudget, nil
	}
	if v := os.Getenv("REIKA_REPO_MAP_BUDGET"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("REIKA_REPO_MAP_BUDGET=%q is not a number of characters", v)
		}
		return n, nil
	}
	if window <= 0 {
		if v := os.Getenv("REIKA_CONTEXT_WINDOW"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return 0, fmt.Errorf("REIKA_CONTEXT_WINDOW=%q is not a number of tokens", v)
			}
			window = n
		}
	}
	return outline.MapBudget(window), nil
}

type stringList []string

func (s *stringList) String() string     { return fmt.Sprint(*s) }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// optInt is an int flag that may be left unset without showing a default.
type optInt struct {
	n   int
	set bool
}

func (o *optInt) String() string {
	if o == nil || !o.set {
		return ""
	}
	return strconv.Itoa(o.n)
}

func (o *optInt) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return fmt.Errorf("want a number of characters >= 0")
	}
	o.n, o.set = n, true
	return nil
}
