package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"strings"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

//go:embed edit.md
var editDescription string

type editTool struct{}

// editParams are edit's parameters (params.go).
type editParams struct {
	Path       string `json:"path" jsonschema:"File path, relative to the workspace root."`
	OldString  string `json:"old_string" jsonschema:"The exact text to replace."`
	NewString  string `json:"new_string" jsonschema:"The text to put in its place."`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"Replace every occurrence of old_string. Default false."`
}

var editDecl = Declare[editParams]()

func (editTool) Spec() ctxwin.ToolSpec {
	return editDecl.Spec(NameEdit, strings.TrimSpace(editDescription))
}

func (editTool) Run(ctx context.Context, env *Env, raw json.RawMessage) (ctxwin.Result, error) {
	args, err := editDecl.Decode(raw)
	if err != nil {
		return errResult(ctxwin.KindEdit, "%v", err), nil
	}
	p, oldStr, newStr, all := args.Path, args.OldString, args.NewString, args.ReplaceAll
	if oldStr == "" {
		return errResult(ctxwin.KindEdit, "old_string is empty; to create a file or replace all of it, use write"), nil
	}
	if oldStr == newStr {
		return errResult(ctxwin.KindEdit, "old_string and new_string are the same; there is nothing to change"), nil
	}
	pl, err := env.resolve(p)
	if err != nil {
		return errResult(ctxwin.KindEdit, "%v", err), nil
	}
	if err := env.allowWrite(ctx, NameEdit, pl); err != nil {
		return errResult(ctxwin.KindEdit, "%v", err), nil
	}
	if err := notSpecial(pl); err != nil {
		return errResult(ctxwin.KindEdit, "%v", err), nil
	}
	data, err := env.files().ReadFile(pl.Abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errResult(ctxwin.KindEdit, "%s does not exist; to create it, use write", pl.Rel), nil
		}
		return errResult(ctxwin.KindEdit, "cannot read %s: %v", pl.Rel, plainErr(err)), nil
	}
	if isBinary(data) {
		return errResult(ctxwin.KindEdit, "%s is a binary file; edit changes text files only", pl.Rel), nil
	}
	content := string(data)
	offsets, oldStr, newStr := findOld(content, oldStr, newStr)
	switch {
	case len(offsets) == 0:
		return errResult(ctxwin.KindEdit, "%s", notFound(pl.Rel, content, oldStr)), nil
	case len(offsets) > 1 && !all:
		return errResult(ctxwin.KindEdit, "old_string occurs %d times in %s (at lines %s); add surrounding lines to make it unique, or set replace_all to true to replace every one", len(offsets), pl.Rel, lineList(content, offsets)), nil
	}
	ops := replaceScript(content, offsets, oldStr, newStr)
	oldName, newName := diffNames(pl.Rel, false)
	diff, hunks := unifiedDiff(oldName, newName, ops)
	summary := fmt.Sprintf("edit %s (%s)", pl.Rel, plural(hunks, "hunk"))
	if err := env.approveChange(ctx, NameEdit, pl, summary, approvalDiff(diff)); err != nil {
		return errResult(ctxwin.KindEdit, "%v", err), nil
	}
	updated := applyAt(content, offsets, oldStr, newStr)
	if err := env.files().WriteFile(ctx, pl.Abs, []byte(updated)); err != nil {
		return errResult(ctxwin.KindEdit, "cannot write %s: %v", pl.Rel, plainErr(err)), nil
	}
	return ctxwin.Result{
		Kind:    ctxwin.KindEdit,
		Text:    diff,
		Summary: fmt.Sprintf("Edited %s (%s)", pl.Rel, plural(hunks, "hunk")),
		Path:    pl.Rel,
	}, nil
}

// findOld returns the offsets of oldStr in content. When it is not there
// as written and the file has Windows line endings the model did not
// write, both strings are given the file's line endings.
func findOld(content, oldStr, newStr string) ([]int, string, string) {
	offsets := findAll(content, oldStr)
	if len(offsets) == 0 && strings.Contains(content, "\r\n") && !strings.Contains(oldStr, "\r\n") {
		oldStr = strings.ReplaceAll(oldStr, "\n", "\r\n")
		newStr = strings.ReplaceAll(strings.ReplaceAll(newStr, "\r\n", "\n"), "\n", "\r\n")
		offsets = findAll(content, oldStr)
	}
	return offsets, oldStr, newStr
}

// findAll returns the offsets of the non-overlapping occurrences of sub.
func findAll(s, sub string) []int {
	var out []int
	for at := 0; ; {
		i := strings.Index(s[at:], sub)
		if i < 0 {
			return out
		}
		out = append(out, at+i)
		at += i + len(sub)
	}
}

// applyAt replaces old at each offset with repl.
func applyAt(s string, offsets []int, old, repl string) string {
	var b strings.Builder
	b.Grow(len(s) + len(offsets)*(len(repl)-len(old)))
	at := 0
	for _, o := range offsets {
		b.WriteString(s[at:o])
		b.WriteString(repl)
		at = o + len(old)
	}
	b.WriteString(s[at:])
	return b.String()
}

// lineOf is the 1-based line of offset i.
func lineOf(s string, i int) int { return strings.Count(s[:i], "\n") + 1 }

// lineList names the lines of the first few offsets: "3, 17, 40 and 2 more".
func lineList(s string, offsets []int) string {
	var parts []string
	for _, o := range offsets[:min(len(offsets), 5)] {
		parts = append(parts, strconv.Itoa(lineOf(s, o)))
	}
	out := strings.Join(parts, ", ")
	if len(offsets) > 5 {
		out += fmt.Sprintf(" and %d more", len(offsets)-5)
	}
	return out
}

var lineNumberPrefix = regexp.MustCompile(`(?m)^\s*\d+(→|\t)`)

// notFound explains a failed match and points at the likely cause.
func notFound(rel, content, old string) string {
	msg := fmt.Sprintf("old_string was not found in %s", rel)
	if lineNumberPrefix.MatchString(old) && !lineNumberPrefix.MatchString(content) {
		return msg + "; it seems to contain the line numbers that read shows: leave them out"
	}
	// Find the first non-blank line of old_string, ignoring indentation.
	first := ""
	for l := range strings.SplitSeq(old, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			first = t
			break
		}
	}
	if first != "" {
		var at []string
		for i, l := range strings.Split(content, "\n") {
			if strings.TrimSpace(l) == first {
				at = append(at, strconv.Itoa(i+1))
				if len(at) == 5 {
					break
				}
			}
		}
		if len(at) > 0 {
			return msg + fmt.Sprintf("; its first line appears at line %s, but the rest differs (whitespace, indentation or later lines): read those lines again and copy them exactly", strings.Join(at, ", "))
		}
	}
	return msg + "; read the file again and copy the text exactly"
}

// plural is "1 hunk" or "3 hunks" ("matches" for "match").
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if strings.HasSuffix(word, "ch") || strings.HasSuffix(word, "s") || strings.HasSuffix(word, "x") {
		return fmt.Sprintf("%d %ses", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
