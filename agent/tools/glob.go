package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

//go:embed glob.md
var globDescription string

type globTool struct{}

// globParams are glob's parameters (params.go).
type globParams struct {
	Pattern string `json:"pattern" jsonschema:"Glob pattern, e.g. **/*.go or src/*.{ts,tsx}."`
	Path    string `json:"path,omitempty" jsonschema:"Directory to search, relative to the workspace root. Default the workspace root."`
}

var globDecl = Declare[globParams]()

func (globTool) Spec() ctxwin.ToolSpec {
	return globDecl.Spec(NameGlob, strings.TrimSpace(globDescription))
}

func (globTool) Run(ctx context.Context, env *Env, raw json.RawMessage) (ctxwin.Result, error) {
	args, err := globDecl.Decode(raw)
	if err != nil {
		return errResult(ctxwin.KindGlob, "%v", err), nil
	}
	pattern, p := strings.TrimSpace(args.Pattern), args.Path
	if filepath.IsAbs(pattern) {
		return errResult(ctxwin.KindGlob, "pattern %q is absolute; give the directory as path and a relative pattern", pattern), nil
	}
	g, err := compileGlob(pattern, false)
	if err != nil {
		return errResult(ctxwin.KindGlob, "%v", err), nil
	}
	if strings.TrimSpace(p) == "" {
		p = "."
	}
	pl, err := env.resolve(p)
	if err != nil {
		return errResult(ctxwin.KindGlob, "%v", err), nil
	}
	if err := env.allowRead(ctx, NameGlob, pl); err != nil {
		return errResult(ctxwin.KindGlob, "%v", err), nil
	}
	var names []string
	err = env.walkFiles(ctx, pl, func(name, rel, abs string) error {
		if g.match(rel) {
			names = append(names, name)
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errResult(ctxwin.KindGlob, "%s does not exist", pl.Rel), nil
		}
		if ctx.Err() != nil {
			return errResult(ctxwin.KindGlob, "glob was cancelled"), nil
		}
		return errResult(ctxwin.KindGlob, "cannot list %s: %v", pl.Rel, plainErr(err)), nil
	}
	slices.Sort(names)
	summary := fmt.Sprintf("glob %q: %s", pattern, plural(len(names), "file"))
	if pl.Rel != "." {
		summary = fmt.Sprintf("glob %q in %s: %s", pattern, pl.Rel, plural(len(names), "file"))
	}
	if len(names) == 0 {
		text := fmt.Sprintf("No files match %q in %s.", pattern, placeName(pl))
		if !strings.Contains(pattern, "/") && !strings.HasPrefix(pattern, "**") {
			text += fmt.Sprintf(" The pattern matches files directly in %s only; use \"**/%s\" to search every directory below it.", placeName(pl), pattern)
		}
		return ctxwin.Result{Kind: ctxwin.KindGlob, Text: text + "\n", Summary: summary, Query: pattern}, nil
	}
	out := newOutput(env, "glob")
	out.saveBytes = GlobSaveBytes
	for _, n := range names {
		fmt.Fprintln(out, listedName(n))
	}
	text, saved := out.finish()
	return ctxwin.Result{Kind: ctxwin.KindGlob, Text: text, Summary: summary, SavedTo: saved, Query: pattern}, nil
}

// listedName is how a listing prints a path: as it is, unless a control
// character (a newline, a tab) would make the listing ambiguous, or it
// starts with a double quote; then quoted, Go-style ("a\nb.txt"), which
// resolve takes back.
func listedName(name string) string {
	if strings.ContainsFunc(name, unicode.IsControl) || strings.HasPrefix(name, `"`) || !utf8.ValidString(name) {
		return strconv.Quote(name)
	}
	return name
}

// unlistName takes back listedName: a quoted path whose unquoted form
// listedName would quote.
func unlistName(p string) string {
	if len(p) < 2 || p[0] != '"' || p[len(p)-1] != '"' {
		return p
	}
	if u, err := strconv.Unquote(p); err == nil && listedName(u) == p {
		return u
	}
	return p
}
