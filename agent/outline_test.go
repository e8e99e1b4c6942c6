package agent

import (
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// TestShedReadOutline: a shed read of the whole file keeps the file's
// outline; a read of part of it, the declarations those lines showed.
func TestShedReadOutline(t *testing.T) {
	src := []byte("package a\n\nfunc Before() {\n}\n\nfunc Cut() {\n\tx := 1\n\t_ = x\n}\n\nfunc After() {\n}\n")
	a := &Agent{}
	whole := a.outline(&ctxwin.Result{Kind: ctxwin.KindRead, Path: "a.go", Source: src, StartLine: 1, EndLine: 12, TotalLines: 12}, 1000)
	for _, want := range []string{"func Before()", "func Cut()", "func After()"} {
		if !strings.Contains(whole, want) {
			t.Errorf("the whole file's outline lacks %q:\n%s", want, whole)
		}
	}
	part := a.outline(&ctxwin.Result{Kind: ctxwin.KindRead, Path: "a.go", Source: src, StartLine: 7, EndLine: 11, TotalLines: 12}, 1000)
	if part != "L6-9 func Cut()\nL11-12 func After()" {
		t.Errorf("the outline of lines 7-11 = %q, want the declarations they show", part)
	}
}
