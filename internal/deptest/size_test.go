package deptest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The limits of issue 18: no file over 600 lines and no function over 80
// outside tests. A file or function that must be one piece says why in a
// comment holding "one piece". And of issue 33: at most maxLongFuncs
// functions outside tests over longFuncLines, one piece or not.
const (
	maxFileLines  = 600
	maxFuncLines  = 80
	longFuncLines = 60
	maxLongFuncs  = 10
)

// TestSizes holds every non-test Go file of the repository to the limits.
func TestSizes(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	files := 0
	var long []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			return err
		}
		files++
		if ast.IsGenerated(f) {
			return nil
		}
		if n := strings.Count(string(src), "\n"); n > maxFileLines && !strings.Contains(string(src), "one piece") {
			t.Errorf("%s: %d lines, more than %d", path, n, maxFileLines)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			n := fset.Position(fn.Body.End()).Line - fset.Position(fn.Pos()).Line + 1
			if n > maxFuncLines && (fn.Doc == nil || !strings.Contains(fn.Doc.Text(), "one piece")) {
				t.Errorf("%s: func %s is %d lines, more than %d", path, fn.Name.Name, n, maxFuncLines)
			}
			if n > longFuncLines {
				long = append(long, fmt.Sprintf("%s: func %s is %d lines", path, fn.Name.Name, n))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("only %d Go files found under %s", files, root)
	}
	if len(long) > maxLongFuncs {
		t.Errorf("%d functions are over %d lines, more than %d; split some:\n%s",
			len(long), longFuncLines, maxLongFuncs, strings.Join(long, "\n"))
	}
}

// sourceExts are the languages of the repository's source, tests included,
// held to maxFileLines by TestSourceFileSizes (issue 33: no source file over
// 600 lines in any language; generated code and golden data aside).
var sourceExts = []string{".go", ".ts", ".js", ".mjs", ".lua", ".sh", ".vim"}

// TestSourceFileSizes holds every source file the repository tracks, in
// every language and tests included, to maxFileLines. Generated Go code,
// testdata, node_modules, dist and the lock files are not source.
func TestSourceFileSizes(t *testing.T) {
	root := filepath.Join("..", "..")
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata" || name == "dist" || name == "out") {
				return filepath.SkipDir
			}
			return nil
		}
		if !slices.Contains(sourceExts, filepath.Ext(name)) {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		if strings.HasSuffix(name, ".go") && generated.Match(src) {
			return nil
		}
		if n := strings.Count(string(src), "\n"); n > maxFileLines && !strings.Contains(string(src), "one piece") {
			t.Errorf("%s: %d lines, more than %d", path, n, maxFileLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 150 {
		t.Fatalf("only %d source files found under %s", files, root)
	}
}

// generated is the line Go's tools put in generated files.
var generated = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)
