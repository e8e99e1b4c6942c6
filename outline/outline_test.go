//go:build cgo

package outline

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"
)

func TestNoOutline(t *testing.T) {
	cases := []struct {
		path string
		src  []byte
		want error
	}{
		{"notes.xyz", []byte("func main() {}\n"), ErrNoOutline},
		{"Makefile", []byte("all:\n\tgo build\n"), ErrNoOutline},
		{"a.go", []byte("package a\x00\x01\x02func F() {}\n"), ErrBinary},
		{"big.go", append([]byte("package a\n"), bytes.Repeat([]byte("// x\n"), 1000)...), ErrTooLarge},
	}
	for _, c := range cases {
		_, err := ParseLimited(c.path, c.src, Limits{MaxBytes: 4000})
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.path, err, c.want)
		}
		if err != nil && !strings.Contains(err.Error(), c.path) {
			t.Errorf("%s: error %q does not name the file", c.path, err)
		}
	}
	if s := Summary("notes.xyz", []byte("x"), 1000); s != "" {
		t.Errorf("Summary of an unknown file type = %q, want \"\"", s)
	}
	if s := Summary("a.go", []byte("package a\x00"), 1000); s != "" {
		t.Errorf("Summary of a binary file = %q, want \"\"", s)
	}
}

func TestSummary(t *testing.T) {
	src := []byte("package a\n\nimport \"net\"\n\n// Serve serves.\nfunc (s *Server) Serve(l net.Listener) error {\n\treturn nil\n}\n")
	got := Summary("src/a.go", src, 1000)
	want := "L3 imports: net\nL6-8 func (s *Server) Serve(l net.Listener) error"
	if got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	// Too small for the entry: the trailer alone.
	if got := Summary("src/a.go", src, 40); got != "… 2 of 2 entries left out" {
		t.Errorf("Summary within 40 = %q", got)
	}
	if got := Summary("src/a.go", src, 5); got != "" {
		t.Errorf("Summary within 5 = %q, want \"\"", got)
	}
}

// TestRenderBudget renders every golden source at every budget from 1 to
// its full size: a rendering never exceeds its budget, and its last line
// counts exactly the entries it does not show.
func TestRenderBudget(t *testing.T) {
	trailer := regexp.MustCompile(`^… (\d+) of (\d+) entries left out$`)
	for _, src := range goldenSources(t) {
		o, err := Parse(src.name, src.data)
		if err != nil {
			t.Fatalf("%s: %v", src.name, err)
		}
		full := o.Render(0)
		total := count(o.Entries)
		if total == 0 {
			continue
		}
		for budget := 1; budget <= len(full)+1; budget++ {
			r := o.Render(budget)
			if len(r) > budget {
				t.Fatalf("%s: Render(%d) is %d bytes", src.name, budget, len(r))
			}
			if len(r) >= len(full) {
				if r != full {
					t.Fatalf("%s: Render(%d) = %q, want the full rendering", src.name, budget, r)
				}
				continue
			}
			if r == "" {
				continue // not even the trailer fits
			}
			lines := strings.Split(r, "\n")
			m := trailer.FindStringSubmatch(lines[len(lines)-1])
			if m == nil {
				t.Fatalf("%s: Render(%d) has no trailer:\n%s", src.name, budget, r)
			}
			left, _ := strconv.Atoi(m[1])
			all, _ := strconv.Atoi(m[2])
			shown := 0
			for _, l := range lines[:len(lines)-1] {
				if strings.HasPrefix(strings.TrimLeft(l, " "), "L") {
					shown++
				}
			}
			if all != total || shown+left != total {
				t.Fatalf("%s: Render(%d) shows %d and says %d of %d left out; the outline has %d:\n%s",
					src.name, budget, shown, left, all, total, r)
			}
		}
	}
}

func count(es []Entry) int {
	n := len(es)
	for _, e := range es {
		n += count(e.Children)
	}
	return n
}

type source struct {
	name string
	data []byte
}

func goldenSources(t testing.TB) []source {
	archives, _ := filepath.Glob("testdata/*.txtar")
	var out []source
	for _, path := range archives {
		a, err := txtar.ParseFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range a.Files {
			if !strings.Contains(f.Name, ".want") {
				out = append(out, source{f.Name, f.Data})
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no golden sources")
	}
	return out
}

// bigGo is a valid Go file of about n bytes.
func bigGo(n int) []byte {
	var b bytes.Buffer
	b.WriteString("package big\n\n")
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "func F%d(a, b int) int {\n\tif a > b {\n\t\treturn a - b + %d\n\t}\n\treturn b*a + %d\n}\n\n", i, i, i)
	}
	return b.Bytes()
}

// TestTimeout checks that a parse that runs out of time reports
// ErrTimeout, and that the parser it used, reset and put back, parses the
// next file correctly (it would otherwise resume the abandoned parse).
func TestTimeout(t *testing.T) {
	big := bigGo(1 << 20)
	if _, err := ParseLimited("big.go", big, Limits{Timeout: time.Microsecond}); !errors.Is(err, ErrTimeout) {
		t.Fatalf("1µs parse of 1 MB: err = %v, want ErrTimeout", err)
	}
	small := []byte("package a\n\nfunc One() {}\n\nfunc Two() {}\n")
	for i := 0; i < 10; i++ {
		o, err := Parse("a.go", small)
		if err != nil {
			t.Fatal(err)
		}
		if got := o.Render(0); got != "L3 func One()\nL5 func Two()" || o.Partial {
			t.Fatalf("after a timeout, outline = %q (partial %v)", got, o.Partial)
		}
	}
	o, err := ParseLimited("big.go", big, Limits{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(o.Entries[0].Signature, "func F0(") || o.Partial {
		t.Errorf("big file after a timeout: first entry %q, partial %v", o.Entries[0].Signature, o.Partial)
	}
}

// TestParsesWithBackgroundContext enforces the rule of docs/design.md §6: no
// cancellable context reaches the parser. Every ParseCtx call in this
// package passes context.Background().
func TestParsesWithBackgroundContext(t *testing.T) {
	fset := token.NewFileSet()
	paths, _ := filepath.Glob("*.go")
	calls := 0
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		{
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || (sel.Sel.Name != "ParseCtx" && sel.Sel.Name != "ParseInputCtx") {
					return true
				}
				calls++
				arg, ok := call.Args[0].(*ast.CallExpr)
				fn, ok2 := func() (*ast.SelectorExpr, bool) {
					if !ok {
						return nil, false
					}
					s, ok := arg.Fun.(*ast.SelectorExpr)
					return s, ok
				}()
				if !ok2 || fn.Sel.Name != "Background" || fmt.Sprint(fn.X) != "context" {
					t.Errorf("%s: %s is called with a context other than context.Background()", fset.Position(call.Pos()), sel.Sel.Name)
				}
				return true
			})
		}
	}
	if calls == 0 {
		t.Fatal("found no ParseCtx call to check")
	}
}

// TestLiveObjects checks that parses leave no tree open and keep at most
// a few idle parsers per language.
func TestLiveObjects(t *testing.T) {
	for _, src := range goldenSources(t) {
		if _, err := Parse(src.name, src.data); err != nil {
			t.Fatal(err)
		}
	}
	if n := liveTrees.Load(); n != 0 {
		t.Errorf("%d trees not closed", n)
	}
	idle := 0
	for _, g := range grammars {
		idle += len(g.free)
	}
	if n := liveParsers.Load(); n != int64(idle) {
		t.Errorf("%d parsers alive, %d idle in the free lists: some were neither put back nor closed", n, idle)
	}
}

// TestSummaryLines: the outline of a read of part of a file lists the
// declarations those lines show, a function cut by either end included,
// and a struct with only its members among them.
func TestSummaryLines(t *testing.T) {
	src := []byte(`package a

func Before() {
}

type Pair struct {
	A int
	B int
	C int
}

func Cut() {
	x := 1
	_ = x
}

func After() {
}
`)
	for _, c := range []struct {
		from, to int
		want     string
	}{
		{1, 19, "L3-4 func Before()\nL6-10 type Pair struct\n  L7 A int\n  L8 B int\n  L9 C int\nL12-15 func Cut()\nL17-18 func After()"},
		{8, 13, "L6-10 type Pair struct\n  L8 B int\n  L9 C int\nL12-15 func Cut()"},
		{14, 14, "L12-15 func Cut()"},
		{5, 5, ""},
	} {
		if got := SummaryLines("a.go", src, c.from, c.to, 1000); got != c.want {
			t.Errorf("SummaryLines(%d-%d) = %q, want %q", c.from, c.to, got, c.want)
		}
	}
	if got, all := SummaryLines("a.go", src, 1, 19, 1000), Summary("a.go", src, 1000); got != all {
		t.Errorf("the whole file's lines: %q, want the whole outline %q", got, all)
	}
}
