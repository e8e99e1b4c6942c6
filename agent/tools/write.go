package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

//go:embed write.md
var writeDescription string

type writeTool struct{}

// writeParams are write's parameters (params.go).
type writeParams struct {
	Path    string `json:"path" jsonschema:"File path, relative to the workspace root."`
	Content string `json:"content" jsonschema:"The whole new content of the file."`
}

var writeDecl = Declare[writeParams]()

func (writeTool) Spec() ctxwin.ToolSpec {
	return writeDecl.Spec(NameWrite, strings.TrimSpace(writeDescription))
}

func (writeTool) Run(ctx context.Context, env *Env, raw json.RawMessage) (ctxwin.Result, error) {
	args, err := writeDecl.Decode(raw)
	if err != nil {
		return errResult(ctxwin.KindWrite, "%v", err), nil
	}
	p, content := args.Path, args.Content
	pl, err := env.resolve(p)
	if err != nil {
		return errResult(ctxwin.KindWrite, "%v", err), nil
	}
	if err := env.allowWrite(ctx, NameWrite, pl); err != nil {
		return errResult(ctxwin.KindWrite, "%v", err), nil
	}
	if pl.Inside && pl.Rel == "." {
		return errResult(ctxwin.KindWrite, "%s is the workspace root, not a file", p), nil
	}
	fi, statErr := os.Stat(pl.Abs)
	if statErr == nil && fi.IsDir() {
		return errResult(ctxwin.KindWrite, "%s is a directory", pl.Rel), nil
	}
	if err := notSpecial(pl); err != nil {
		return errResult(ctxwin.KindWrite, "%v", err), nil
	}
	var old []byte
	isNew := true
	if b, err := env.files().ReadFile(pl.Abs); err == nil {
		old, isNew = b, false
	}
	n := countLines(content)
	oldName, newName := diffNames(pl.Rel, isNew)
	diff, _ := unifiedDiff(oldName, newName, diffLines(splitLines(string(old)), splitLines(content)))
	what := "replace"
	if isNew {
		what = "new file"
	}
	summary := fmt.Sprintf("write %s (%s, %s)", pl.Rel, what, plural(n, "line"))
	if err := env.approveChange(ctx, NameWrite, pl, summary, approvalDiff(diff)); err != nil {
		return errResult(ctxwin.KindWrite, "%v", err), nil
	}
	if err := os.MkdirAll(filepath.Dir(pl.Abs), 0o755); err != nil {
		return errResult(ctxwin.KindWrite, "cannot create the directory of %s: %v", pl.Rel, plainErr(err)), nil
	}
	if err := env.files().WriteFile(ctx, pl.Abs, []byte(content)); err != nil {
		return errResult(ctxwin.KindWrite, "cannot write %s: %v", pl.Rel, plainErr(err)), nil
	}
	done := fmt.Sprintf("Wrote %s (%s)", pl.Rel, plural(n, "line"))
	text := done
	if isNew {
		text += ", a new file"
	}
	return ctxwin.Result{Kind: ctxwin.KindWrite, Text: text, Summary: done, Path: pl.Rel}, nil
}

// countLines is the number of lines of s; a last line without a newline
// counts.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}
