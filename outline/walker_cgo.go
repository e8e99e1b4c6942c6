//go:build cgo

package outline

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
)

// walker holds the source of the tree being walked and the helpers every
// language's outline uses.
type walker struct {
	src  []byte
	lang string
}

// maxFallback bounds the statements a file without declarations lists.
const maxFallback = 400

func typ(n *sitter.Node) string {
	if n == nil {
		return ""
	}
	return n.Type()
}

func field(n *sitter.Node, name string) *sitter.Node {
	if n == nil {
		return nil
	}
	return n.ChildByFieldName(name)
}

// named returns the named children of n.
func named(n *sitter.Node) []*sitter.Node {
	if n == nil {
		return nil
	}
	k := int(n.NamedChildCount())
	out := make([]*sitter.Node, 0, k)
	for i := 0; i < k; i++ {
		if c := n.NamedChild(i); c != nil {
			out = append(out, c)
		}
	}
	return out
}

// firstNamed returns the first named child of n of one of the types, or
// with no types the first named child that is not a comment.
func firstNamed(n *sitter.Node, types ...string) *sitter.Node {
	for _, c := range named(n) {
		if len(types) == 0 && !strings.Contains(c.Type(), "comment") || slices.Contains(types, c.Type()) {
			return c
		}
	}
	return nil
}

// hasChild reports whether n has a child (named or not) of type t.
func hasChild(n *sitter.Node, t string) bool {
	k := int(n.ChildCount())
	for i := 0; i < k; i++ {
		if c := n.Child(i); c != nil && c.Type() == t {
			return true
		}
	}
	return false
}

func (w *walker) text(n *sitter.Node) string {
	if n == nil {
		return ""
	}
	return string(w.src[n.StartByte():n.EndByte()])
}

// span returns the 1-based first and last line of n. A node that ends at
// column 0 of a line (one that includes its newline) ends on the line before.
func span(n *sitter.Node) (int, int) {
	s, e := n.StartPoint(), n.EndPoint()
	end := int(e.Row)
	if e.Column == 0 && e.Row > s.Row {
		end--
	}
	return int(s.Row) + 1, end + 1
}

// entry makes an entry spanning n.
func (w *walker) entry(n *sitter.Node, kind, name, sig string) Entry {
	a, b := span(n)
	return Entry{Name: name, Kind: kind, Line: a, EndLine: b, Signature: sig}
}

// head returns the source of n up to stop (a child, usually the body) on one
// line, without a trailing "{", ":", "=", ";" or ",". With stop nil it is
// all of n.
func (w *walker) head(n, stop *sitter.Node) string {
	return w.headFrom(n.StartByte(), n, stop)
}

// headFrom is head starting at byte from instead of n's start.
func (w *walker) headFrom(from uint32, n, stop *sitter.Node) string {
	end := n.EndByte()
	if stop != nil && stop.StartByte() >= from && stop.StartByte() <= end {
		end = stop.StartByte()
	}
	s := collapse(w.stripComments(from, end))
	return strings.TrimRight(s, " {:=;,")
}

// stripComments returns src[from:end] with its comments replaced by a
// space: a comment in a parameter list would otherwise end up in the
// signature.
func (w *walker) stripComments(from, end uint32) string {
	return stripComments(w.src[from:end], w.lang)
}

// line returns the first line of n, collapsed, without a trailing ";" or
// ",", and with " …" when n goes on.
func (w *walker) line(n *sitter.Node) string {
	s := bytes.TrimRight(w.src[n.StartByte():n.EndByte()], " \t\r\n")
	more := false
	if i := bytes.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
		more = true
	}
	out := strings.TrimRight(collapse(string(s)), " ;,")
	if more && !strings.HasSuffix(out, "…") {
		out += " …"
	}
	return out
}

// importsEntry collapses a run of import statements into one entry whose
// signature lists what they import.
func importsEntry(first, last *sitter.Node, names []string) Entry {
	a, _ := span(first)
	_, b := span(last)
	return Entry{Name: "imports", Kind: KindImports, Line: a, EndLine: b, Signature: "imports: " + joinNames(names)}
}

// joinNames joins names with ", ", up to about MaxSignature bytes, ending
// with "… (+N)" when some are left out.
func joinNames(names []string) string {
	var b strings.Builder
	for i, n := range names {
		if i > 0 && b.Len()+len(n) > MaxSignature-20 {
			b.WriteString(", … (+")
			b.WriteString(strconv.Itoa(len(names) - i))
			b.WriteString(")")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n)
	}
	return b.String()
}

// importRun accumulates consecutive import statements into entries.
type importRun struct {
	first, last *sitter.Node
	names       []string
	out         *[]Entry
}

func (r *importRun) add(n *sitter.Node, names ...string) {
	if r.first == nil {
		r.first = n
	}
	r.last = n
	for _, name := range names {
		if name != "" && !slices.Contains(r.names, name) {
			r.names = append(r.names, name)
		}
	}
}

// flush ends the run (call it at any declaration that is not an import).
func (r *importRun) flush() {
	if r.first != nil {
		*r.out = append(*r.out, importsEntry(r.first, r.last, r.names))
	}
	r.first, r.last, r.names = nil, nil, nil
}

func sortEntries(es []Entry) {
	slices.SortStableFunc(es, func(a, b Entry) int { return a.Line - b.Line })
}

// fallback outlines a file without declarations: for JavaScript the
// declarations inside a function that wraps most of the file (an IIFE, a
// UMD factory), else the file's top-level statements.
func (w *walker) fallback(root *sitter.Node, have []Entry) []Entry {
	switch w.lang {
	case "javascript", "typescript", "tsx":
		if body := w.wrapperBody(root); body != nil {
			if es := walkJSStatements(w, body); hasDecls(es) {
				return es
			}
		}
	}
	var out []Entry
	for _, c := range named(root) {
		switch c.Type() {
		case "comment", "line_comment", "block_comment", "import_statement", "import_from_statement",
			"future_import_statement", "import_declaration", "use_declaration", "preproc_include",
			"package_clause", "package_declaration", "empty_statement", "hash_bang_line":
			continue
		}
		if c.Type() == "expression_statement" && typ(firstNamed(c)) == "string" && w.lang == "python" {
			continue // a docstring
		}
		if len(out) == maxFallback {
			break
		}
		if line, _ := span(c); covered(have, line) {
			continue // an import the outline already lists
		}
		out = append(out, w.entry(c, KindStatement, "", w.line(c)))
	}
	return out
}

func covered(es []Entry, line int) bool {
	for _, e := range es {
		if line >= e.Line && line <= e.EndLine {
			return true
		}
	}
	return false
}

// wrapperBody finds the body of the largest function expression reachable
// from a top-level expression statement through calls, parentheses and
// unary operators, if that body holds most of the file.
func (w *walker) wrapperBody(root *sitter.Node) *sitter.Node {
	var best *sitter.Node
	var visit func(n *sitter.Node, depth int)
	visit = func(n *sitter.Node, depth int) {
		if n == nil || depth > 8 {
			return
		}
		switch n.Type() {
		case "function_expression", "function", "arrow_function":
			body := field(n, "body")
			if typ(body) == "statement_block" && (best == nil || body.EndByte()-body.StartByte() > best.EndByte()-best.StartByte()) {
				best = body
			}
			return
		case "expression_statement", "call_expression", "parenthesized_expression", "unary_expression",
			"arguments", "member_expression", "sequence_expression", "assignment_expression",
			"new_expression", "await_expression", "ternary_expression", "binary_expression":
			for _, c := range named(n) {
				visit(c, depth+1)
			}
		}
	}
	for _, c := range named(root) {
		if c.Type() == "expression_statement" {
			visit(c, 0)
		}
	}
	if best == nil || 2*(best.EndByte()-best.StartByte()) < uint32(len(w.src)) {
		return nil
	}
	return best
}
