//go:build cgo

package outline

import (
	"errors"
	"path/filepath"
	"testing"
)

// FuzzParse feeds arbitrary bytes to every language's outline: no panic,
// every range inside the file, and a rendering within its budget.
//
//	go test ./outline -run '^$' -fuzz FuzzParse -fuzztime 60s
func FuzzParse(f *testing.F) {
	exts := []string{".go", ".py", ".js", ".ts", ".tsx", ".rs", ".c", ".h", ".cpp", ".java", ".rb"}
	for _, s := range goldenSources(f) {
		for i, e := range exts {
			if e == filepath.Ext(s.name) {
				f.Add(uint8(i), s.data, uint16(300))
			}
		}
	}
	f.Fuzz(func(t *testing.T, lang uint8, src []byte, budget uint16) {
		path := "fuzz" + exts[int(lang)%len(exts)]
		o, err := Parse(path, src)
		if errors.Is(err, errInternal) {
			t.Fatal(err)
		}
		if err != nil {
			return // binary, too large, timed out
		}
		var check func(es []Entry, depth int)
		check = func(es []Entry, depth int) {
			for _, e := range es {
				if e.Line < 1 || e.EndLine < e.Line || e.EndLine > max(o.Lines, 1) {
					t.Fatalf("%s: entry %q has range %d-%d in a file of %d lines", path, e.Signature, e.Line, e.EndLine, o.Lines)
				}
				if len(e.Signature) > MaxSignature {
					t.Fatalf("%s: signature of %d bytes", path, len(e.Signature))
				}
				check(e.Children, depth+1)
			}
		}
		check(o.Entries, 0)
		if r := o.Render(int(budget)); budget > 0 && len(r) > int(budget) {
			t.Fatalf("%s: Render(%d) is %d bytes", path, budget, len(r))
		}
		if liveTrees.Load() < 0 {
			t.Fatal("tree counter below zero")
		}
	})
}
