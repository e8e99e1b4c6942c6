package agent

import (
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

type touchedMap struct{ touched []string }

func (m *touchedMap) Render(int) (string, error) { return "", nil }
func (m *touchedMap) Touch(rel string)           { m.touched = append(m.touched, rel) }

// TestFirstReadOfANamedFileDefinesTheTask: of the files a turn's prompt
// names, the first read of each is a task read (never shed); a second
// read of it, and a read of another file, are not.
func TestFirstReadOfANamedFileDefinesTheTask(t *testing.T) {
	a := &Agent{}
	repo := &touchedMap{}
	a.repo.once.Do(func() { a.repo.m = repo })
	sess := &session{root: t.TempDir(), m: ctxwin.NewManager(ctxwin.NewHistory("system", nil), 32768)}
	r := &run{h: a, sess: sess, taskPaths: mentionedPaths(AskParams{Prompt: "Fix the bug in src/a.go."})}
	read := func(path string) *ctxwin.Result {
		return r.toResult(ctxwin.ToolCall{ID: "c", Name: "read"}, &ctxwin.Result{Kind: ctxwin.KindRead, Path: path, Text: "package a\n"})
	}
	if !read("src/a.go").Task {
		t.Error("the first read of the file the prompt names is not a task read")
	}
	if read("src/a.go").Task {
		t.Error("a second read of it is a task read")
	}
	if read("src/b.go").Task {
		t.Error("a read of a file the prompt does not name is a task read")
	}
	if got := strings.Join(repo.touched, ","); got != "src/a.go,src/a.go,src/b.go" {
		t.Errorf("the repo map was touched for %q", got)
	}
}
