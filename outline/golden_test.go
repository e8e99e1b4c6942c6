//go:build cgo

package outline

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the golden outlines in testdata/*.txtar")

// TestGolden outlines every source file in testdata/*.txtar and compares the
// result with the archive's NAME.want section (the full rendering, after a
// header line) and any NAME.want@BUDGET section (the rendering within that
// budget). To rewrite the expectations:
//
//	go test ./outline -run TestGolden -update
func TestGolden(t *testing.T) {
	archives, _ := filepath.Glob("testdata/*.txtar")
	if len(archives) == 0 {
		t.Fatal("no testdata/*.txtar")
	}
	for _, path := range archives {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			a, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			sources := map[string][]byte{}
			for _, f := range a.Files {
				if !strings.Contains(f.Name, ".want") {
					sources[f.Name] = f.Data
				}
			}
			changed := false
			for i := range a.Files {
				f := &a.Files[i]
				name, budgetStr, ok := strings.Cut(f.Name, ".want")
				if !ok {
					continue
				}
				src, found := sources[name]
				if !found {
					t.Errorf("%s: no source file %s", f.Name, name)
					continue
				}
				budget := 0
				if b, ok := strings.CutPrefix(budgetStr, "@"); ok {
					if budget, err = strconv.Atoi(b); err != nil {
						t.Fatalf("%s: bad budget: %v", f.Name, err)
					}
				}
				got := goldenText(name, src, budget)
				if string(f.Data) == got {
					continue
				}
				if *update {
					f.Data = []byte(got)
					changed = true
					continue
				}
				t.Errorf("%s: outline differs from %s\n--- got\n%s--- want\n%s", name, f.Name, got, f.Data)
			}
			// Every source has a full expectation.
			var missing []string
			for name := range sources {
				has := false
				for _, f := range a.Files {
					if f.Name == name+".want" {
						has = true
					}
				}
				if !has {
					missing = append(missing, name)
				}
			}
			sort.Strings(missing)
			for _, name := range missing {
				if *update {
					a.Files = append(a.Files, txtar.File{Name: name + ".want", Data: []byte(goldenText(name, sources[name], 0))})
					changed = true
					continue
				}
				t.Errorf("%s has no %s.want section (run with -update)", path, name)
			}
			if changed {
				if err := os.WriteFile(path, txtar.Format(a), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("updated %s", path)
			}
		})
	}
}

// goldenText is the expectation of one source: a header with what Parse
// says about the file, then the rendering.
func goldenText(name string, src []byte, budget int) string {
	o, err := Parse(name, src)
	if err != nil {
		return fmt.Sprintf("error: %v\n", err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "lang=%s lines=%d partial=%v fallback=%v\n", o.Lang, o.Lines, o.Partial, o.Fallback)
	if r := o.Render(budget); r != "" {
		if budget > 0 && len(r) > budget {
			fmt.Fprintf(&b, "OVER BUDGET: %d > %d\n", len(r), budget)
		}
		b.WriteString(r)
		b.WriteByte('\n')
	}
	return b.String()
}
