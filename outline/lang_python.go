//go:build cgo

package outline

import (
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
)

// walkPython outlines a Python module: functions, classes with their
// methods, nested classes and attributes, module-level assignments and type
// aliases, decorated definitions (the range starts at the decorator), and
// the functions, classes and imports inside top-level if/try/with blocks
// (platform switches, optional imports). An `if __name__ == "__main__":` block is listed as a statement.
func walkPython(w *walker, root *sitter.Node) []Entry {
	var out []Entry
	imports := importRun{out: &out}
	pyBlock(w, root, &out, &imports, 0)
	imports.flush()
	return out
}

func pyBlock(w *walker, block *sitter.Node, out *[]Entry, imports *importRun, depth int) {
	for _, c := range named(block) {
		switch c.Type() {
		case "comment":
			continue
		case "import_statement", "import_from_statement", "future_import_statement":
			imports.add(c, pyImportNames(w, c)...)
			continue
		}
		switch c.Type() {
		case "if_statement", "try_statement", "with_statement":
			if depth < 2 {
				n := len(*out)
				for _, b := range pyBlocks(c) {
					pyBlock(w, b, out, imports, depth+1)
				}
				if len(*out) == n && depth == 0 && c.Type() == "if_statement" &&
					strings.Contains(w.text(field(c, "condition")), "__name__") {
					imports.flush()
					*out = append(*out, w.entry(c, KindStatement, "", w.head(c, field(c, "consequence"))))
				}
			}
			continue
		}
		if depth > 0 && c.Type() == "expression_statement" {
			continue // an assignment in a block is not a module declaration
		}
		if e, ok := pyDef(w, c, true); ok {
			imports.flush()
			*out = append(*out, e)
		}
	}
}

// pyBlocks returns the blocks of an if, try or with statement.
func pyBlocks(n *sitter.Node) []*sitter.Node {
	var out []*sitter.Node
	for _, c := range named(n) {
		switch c.Type() {
		case "block":
			out = append(out, c)
		case "elif_clause", "else_clause", "except_clause", "except_group_clause", "finally_clause":
			out = append(out, pyBlocks(c)...)
		}
	}
	return out
}

func pyImportNames(w *walker, n *sitter.Node) []string {
	switch n.Type() {
	case "future_import_statement":
		return []string{"__future__"}
	case "import_from_statement":
		return []string{w.text(field(n, "module_name"))}
	}
	var out []string
	for _, c := range named(n) {
		switch c.Type() {
		case "dotted_name":
			out = append(out, w.text(c))
		case "aliased_import":
			out = append(out, w.text(field(c, "name")))
		}
	}
	return out
}

// pyDef returns the entry of a definition or assignment; top says whether it
// is at module level (functions) or in a class body (methods).
func pyDef(w *walker, n *sitter.Node, top bool) (Entry, bool) {
	switch n.Type() {
	case "decorated_definition":
		def := field(n, "definition")
		e, ok := pyDef(w, def, top)
		if !ok {
			return e, false
		}
		var decos []string
		for _, d := range named(n) {
			if d.Type() == "decorator" {
				decos = append(decos, pyDecorator(w, d))
			}
		}
		e.Line, _ = span(n)
		e.Signature = collapse(strings.Join(decos, " ") + " " + e.Signature)
		return e, true
	case "function_definition":
		name := w.text(field(n, "name"))
		kind := KindFunc
		if !top {
			kind = KindMethod
		}
		e := w.entry(n, kind, name, w.head(n, field(n, "body")))
		e.minor = pyPrivate(name)
		return e, true
	case "class_definition":
		name := w.text(field(n, "name"))
		e := w.entry(n, KindClass, name, w.head(n, field(n, "body")))
		e.minor = pyPrivate(name)
		if top {
			e.Children = pyMembers(w, field(n, "body"))
		}
		return e, true
	case "type_alias_statement":
		e := w.entry(n, KindType, w.text(firstNamed(firstNamed(n, "type"), "identifier")), w.line(n))
		return e, true
	case "expression_statement":
		a := firstNamed(n, "assignment")
		if a == nil {
			return Entry{}, false
		}
		left := field(a, "left")
		if typ(left) != "identifier" && typ(left) != "pattern_list" && typ(left) != "tuple_pattern" {
			return Entry{}, false
		}
		name := w.text(left)
		kind := KindVar
		if !top {
			kind = KindField
		} else if strings.ToUpper(name) == name && strings.ContainsAny(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
			kind = KindConst
		}
		e := w.entry(n, kind, name, w.line(n))
		e.minor = pyPrivate(name)
		return e, true
	}
	return Entry{}, false
}

// pyDecorator returns a decorator without its arguments: "@property",
// "@app.route".
func pyDecorator(w *walker, d *sitter.Node) string {
	t := w.text(d)
	if i := strings.IndexByte(t, '('); i >= 0 {
		t = t[:i]
	}
	return strings.TrimSpace(t)
}

func pyMembers(w *walker, body *sitter.Node) []Entry {
	var out []Entry
	for _, c := range named(body) {
		if e, ok := pyDef(w, c, false); ok {
			if e.Kind == KindMethod && e.Name == "__init__" {
				e.Kind = KindConstructor
			}
			out = append(out, e)
		}
	}
	return out
}

// pyPrivate: a leading underscore, but not a dunder name.
func pyPrivate(name string) bool {
	return strings.HasPrefix(name, "_") && !(strings.HasPrefix(name, "__") && strings.HasSuffix(name, "__"))
}
