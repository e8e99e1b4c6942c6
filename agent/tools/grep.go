package tools

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

//go:embed grep.md
var grepDescription string

// Grep limits: files larger than GrepFileBytes are skipped; a matching line
// is printed with at most GrepLineBytes around its first match.
const (
	GrepFileBytes = 8 << 20
	GrepLineBytes = 400
)

type grepTool struct{}

// grepParams are grep's parameters (params.go).
type grepParams struct {
	Pattern string `json:"pattern" jsonschema:"Regular expression (Go RE2 syntax)."`
	Path    string `json:"path,omitempty" jsonschema:"Directory or file to search, relative to the workspace root. Default the whole workspace."`
	Glob    string `json:"glob,omitempty" jsonschema:"Only search files matching this pattern, e.g. *.go or src/**/*.ts."`
}

var grepDecl = Declare[grepParams]()

func (grepTool) Spec() ctxwin.ToolSpec {
	return grepDecl.Spec(NameGrep, strings.TrimSpace(grepDescription))
}

func (grepTool) Run(ctx context.Context, env *Env, raw json.RawMessage) (ctxwin.Result, error) {
	args, err := grepDecl.Decode(raw)
	if err != nil {
		return errResult(ctxwin.KindGrep, "%v", err), nil
	}
	pattern, p, glob := args.Pattern, args.Path, args.Glob
	if pattern == "" {
		return errResult(ctxwin.KindGrep, "pattern is empty"), nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return errResult(ctxwin.KindGrep, "invalid regular expression %q: %v (Go RE2 syntax: no lookaround or backreferences)", pattern, unwrapRegexpErr(err)), nil
	}
	var filter *globPattern
	if strings.TrimSpace(glob) != "" {
		if filter, err = compileGlob(strings.TrimSpace(glob), true); err != nil {
			return errResult(ctxwin.KindGrep, "glob: %v", err), nil
		}
	}
	if strings.TrimSpace(p) == "" {
		p = "."
	}
	pl, err := env.resolve(p)
	if err != nil {
		return errResult(ctxwin.KindGrep, "%v", err), nil
	}
	if err := env.allowRead(ctx, NameGrep, pl); err != nil {
		return errResult(ctxwin.KindGrep, "%v", err), nil
	}

	list, skipped, err := env.grepFiles(ctx, pl, filter)
	out := newOutput(env, "grep")
	var matches, files int
	if err == nil {
		matches, files, err = env.search(ctx, out, list, pattern, re)
	}
	if err != nil {
		out.discard()
		return grepFailed(ctx, pl, err), nil
	}
	text, saved := out.finish()
	where := pl.Rel
	summary := fmt.Sprintf("grep %q in %s: %s in %s", pattern, where, plural(matches, "match"), plural(files, "file"))
	if matches == 0 {
		text = fmt.Sprintf("No matches for %q in %s", pattern, placeName(pl))
		if filter != nil {
			text += fmt.Sprintf(" (files matching %q)", glob)
		}
		text += ".\n"
	}
	if skipped > 0 {
		text += fmt.Sprintf("(%s larger than %s not searched)\n", plural(skipped, "file"), sizeString(GrepFileBytes))
	}
	return ctxwin.Result{Kind: ctxwin.KindGrep, Text: text, Summary: summary, SavedTo: saved, Query: pattern}, nil
}

// grepFailed is the result of a search of pl that failed with err.
func grepFailed(ctx context.Context, pl place, err error) ctxwin.Result {
	if errors.Is(err, fs.ErrNotExist) {
		return errResult(ctxwin.KindGrep, "%s does not exist", pl.Rel)
	}
	if ctx.Err() != nil {
		return errResult(ctxwin.KindGrep, "grep was cancelled")
	}
	return errResult(ctxwin.KindGrep, "cannot search %s: %v", pl.Rel, plainErr(err))
}

// grepFiles are the files under pl that match filter (nil: all), in the
// walk's order, and how many were skipped as larger than GrepFileBytes.
func (env *Env) grepFiles(ctx context.Context, pl place, filter *globPattern) (files []searchFile, skipped int, err error) {
	err = env.walkFiles(ctx, pl, func(name, rel, abs string) error {
		if filter != nil && !filter.match(rel) {
			return nil
		}
		fi, err := os.Stat(abs)
		if err == nil && fi.Size() > GrepFileBytes {
			skipped++
			return nil
		}
		var size int64
		if err == nil {
			size = fi.Size()
		}
		files = append(files, searchFile{name: name, abs: abs, size: size})
		return nil
	})
	return files, skipped, err
}

// searchFile is a file grep searches: name as results print it, abs as
// it is read, size as the walk found it.
type searchFile struct {
	name, abs string
	size      int64
}

// search greps files, in order, into out and returns how many lines
// matched in how many files: with ripgrep where it is installed and the
// search is large enough to gain from it (grep_rg.go), else in Go. Both
// give the same results.
func (env *Env) search(ctx context.Context, out *output, files []searchFile, pattern string, re *regexp.Regexp) (matches, withMatches int, err error) {
	if rg := ripgrepPath(); rg != "" && worthRipgrep(files) {
		if expr, ok := ripgrepPattern(pattern); ok {
			return env.searchRipgrep(ctx, rg, expr, out, files, re)
		}
	}
	return env.searchGo(ctx, out, files, re)
}

// searchGo reads each file through Env.Files (so open buffers win) and
// greps it; unreadable and binary files are skipped.
func (env *Env) searchGo(ctx context.Context, out *output, files []searchFile, re *regexp.Regexp) (matches, withMatches int, err error) {
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
		n := env.grepRead(out, f, re)
		matches += n
		if n > 0 {
			withMatches++
		}
	}
	return matches, withMatches, nil
}

// grepRead greps one file read through Env.Files.
func (env *Env) grepRead(out *output, f searchFile, re *regexp.Regexp) int {
	data, err := env.files().ReadFile(f.abs)
	if err != nil || isBinary(data) {
		return 0
	}
	return grepFile(out, f.name, data, re)
}

// grepFile writes the matching lines of data as name:line:text and returns
// how many there were.
func grepFile(out *output, name string, data []byte, re *regexp.Regexp) int {
	n := 0
	line := 1
	for len(data) > 0 {
		var l []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			l, data = data, nil
		}
		if grepLine(out, name, line, l, re) {
			n++
		}
		line++
	}
	return n
}

// grepLine writes line l (number n, without its newline) of file name as
// name:n:text when re matches it, and reports whether it did. A \r ending
// the line is not part of it.
func grepLine(out *output, name string, n int, l []byte, re *regexp.Regexp) bool {
	l = bytes.TrimSuffix(l, []byte{'\r'})
	loc := re.FindIndex(l)
	if loc == nil {
		return false
	}
	fmt.Fprintf(out, "%s:%d:%s\n", name, n, excerpt(l, loc[0]))
	return true
}

// excerpt is line l cut to about GrepLineBytes around offset at.
func excerpt(l []byte, at int) string {
	if len(l) <= GrepLineBytes {
		return string(l)
	}
	from := max(0, at-GrepLineBytes/4)
	to := min(len(l), from+GrepLineBytes)
	s := string(trimPartialRune(skipContinuation(l[from:to])))
	if from > 0 {
		s = "…" + s
	}
	if to < len(l) {
		s += "…"
	}
	return s
}

// unwrapRegexpErr drops the package's prefix from a regexp error.
func unwrapRegexpErr(err error) string {
	return strings.TrimPrefix(err.Error(), "error parsing regexp: ")
}
