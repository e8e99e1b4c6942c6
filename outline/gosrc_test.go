//go:build cgo

package outline

import (
	"fmt"
	"github.com/reika-lsp/reika-lsp/internal/goroot"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goSrcDirs are the packages of the Go distribution whose files the Go
// outline is checked against go/parser. -short keeps the first two.
var goSrcDirs = []string{
	"net/http", "go/ast",
	"go/parser", "go/types", "runtime", "reflect", "syscall", "fmt", "strings",
	"encoding/json", "os", "math/big", "crypto/tls", "internal/abi", "cmd/go/internal/modload",
}

// TestGoMatchesGoParser checks that the Go outline of real files lists
// exactly the top-level declarations go/parser finds, with the same line
// ranges: every func and method, every type spec, every const and var spec
// (a parenthesized group as one entry with a child per spec), and the
// imports as one entry spanning the import declarations.
func TestGoMatchesGoParser(t *testing.T) {
	root := filepath.Join(goroot.Dir(), "src")
	if _, err := os.Stat(filepath.Join(root, "net", "http", "server.go")); err != nil {
		t.Skipf("no Go source tree at %s: %v", root, err)
	}
	var paths []string
	all := os.Getenv("OUTLINE_GOSRC_ALL") != ""
	if all {
		// The whole distribution: about 10k files, a minute or two.
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") {
				paths = append(paths, p)
			}
			return nil
		})
	} else {
		dirs := goSrcDirs
		if testing.Short() {
			dirs = dirs[:2]
		}
		for _, dir := range dirs {
			ps, _ := filepath.Glob(filepath.Join(root, dir, "*.go"))
			paths = append(paths, ps...)
		}
	}
	files, decls := 0, 0
	{
		for _, p := range paths {
			src, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			want, err := goParserDecls(p, src)
			if err != nil {
				continue // not valid Go on purpose
			}
			o, err := ParseLimited(p, src, Limits{})
			if err != nil {
				t.Errorf("%s: %v", p, err)
				continue
			}
			got := flatGo(o.Entries)
			if all && o.Partial && !equalLines(got, want) {
				// A type checker's test case that go/parser accepts and
				// the grammar does not (~x outside a constraint).
				t.Logf("%s: syntax errors for tree-sitter: outline differs from go/parser:\n%s", p, lineDiff(got, want))
				continue
			}
			if !equalLines(got, want) {
				t.Errorf("%s: outline differs from go/parser:\n%s", p, lineDiff(got, want))
			}
			files++
			decls += len(want)
		}
	}
	if files == 0 {
		t.Fatal("no files checked")
	}
	t.Logf("%d files, %d declarations match go/parser", files, decls)
}

// goParserDecls lists a file's top-level declarations as go/parser sees
// them, in the form flatGo gives an outline.
func goParserDecls(path string, src []byte) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	// Physical lines: //line directives do not move what an editor shows.
	line := func(p token.Pos) int { return fset.PositionFor(p, false).Line }
	var out []string
	var imp []*ast.GenDecl
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			kind := KindFunc
			if d.Recv != nil {
				kind = KindMethod
			}
			out = append(out, fmt.Sprintf("%s %s %d-%d", kind, d.Name.Name, line(d.Pos()), line(d.End())))
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				imp = append(imp, d)
				continue
			}
			grouped := d.Lparen.IsValid()
			kind := strings.ToLower(d.Tok.String())
			if grouped && d.Tok != token.TYPE {
				out = append(out, fmt.Sprintf("%s (group) %d-%d", kind, line(d.Pos()), line(d.End())))
			}
			for _, s := range d.Specs {
				var name string
				switch s := s.(type) {
				case *ast.TypeSpec:
					name = s.Name.Name
				case *ast.ValueSpec:
					var names []string
					for _, n := range s.Names {
						names = append(names, n.Name)
					}
					name = strings.Join(names, ", ")
				}
				a, b := line(d.Pos()), line(d.End())
				if grouped {
					a, b = line(s.Pos()), line(s.End())
				}
				if d.Tok == token.TYPE {
					kind = "type"
				}
				out = append(out, fmt.Sprintf("%s %s %d-%d", kind, name, a, b))
			}
		}
	}
	if len(imp) > 0 {
		out = append([]string{fmt.Sprintf("imports %d-%d", line(imp[0].Pos()), line(imp[len(imp)-1].End()))}, out...)
	}
	return out, nil
}

// flatGo lists an outline's entries in the form of goParserDecls: struct
// and interface types are "type", a const or var group is a "(group)" line
// followed by its specs.
func flatGo(es []Entry) []string {
	var out []string
	for _, e := range es {
		switch e.Kind {
		case KindLines:
			continue // the fallback of a file that declares nothing
		case KindImports:
			out = append(out, fmt.Sprintf("imports %d-%d", e.Line, e.EndLine))
		case KindStruct, KindInterface, KindType:
			out = append(out, fmt.Sprintf("type %s %d-%d", e.Name, e.Line, e.EndLine))
		case KindConst, KindVar:
			if strings.HasPrefix(e.Signature, e.Kind+" (") {
				out = append(out, fmt.Sprintf("%s (group) %d-%d", e.Kind, e.Line, e.EndLine))
				for _, c := range e.Children {
					out = append(out, fmt.Sprintf("%s %s %d-%d", c.Kind, c.Name, c.Line, c.EndLine))
				}
				continue
			}
			out = append(out, fmt.Sprintf("%s %s %d-%d", e.Kind, e.Name, e.Line, e.EndLine))
		default:
			out = append(out, fmt.Sprintf("%s %s %d-%d", e.Kind, e.Name, e.Line, e.EndLine))
		}
	}
	return out
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// lineDiff shows the first lines where got and want differ.
func lineDiff(got, want []string) string {
	var b strings.Builder
	n := max(len(got), len(want))
	shown := 0
	for i := 0; i < n && shown < 8; i++ {
		g, w := "(none)", "(none)"
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			fmt.Fprintf(&b, "  #%d got %q, go/parser %q\n", i, g, w)
			shown++
		}
	}
	fmt.Fprintf(&b, "  (%d entries, go/parser %d)", len(got), len(want))
	return b.String()
}
