//go:build cgo

package outline

import (
	"strconv"
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
)

// walkJS outlines JavaScript, TypeScript and TSX: functions (overloads
// merged), classes with their members, interfaces with theirs, type aliases,
// enums, variables (one entry per declarator; arrow functions and function
// expressions are functions), CommonJS assignments (module.exports,
// exports.x, X.prototype.y). Export statements, decorators and `declare`
// are unwrapped; a namespace or ambient module is listed and its contents
// follow as top-level entries. Imports and re-exports are one line each.
func walkJS(w *walker, root *sitter.Node) []Entry {
	return walkJSStatements(w, root)
}

// jsPrefix is what wraps a declaration: "export ", "export default ",
// "declare ", decorators.
type jsPrefix struct {
	text     string
	exported bool
	outer    *sitter.Node // the wrapping statement, whose range the entry takes
}

func walkJSStatements(w *walker, block *sitter.Node) []Entry {
	var out []Entry
	imports := importRun{out: &out}
	exports := importRun{out: &out}
	flush := func() { imports.flush(); jsFlushExports(&exports) }
	for _, c := range named(block) {
		switch c.Type() {
		case "comment", "hash_bang_line", "empty_statement":
			continue
		case "import_statement":
			jsFlushExports(&exports)
			imports.add(c, jsImportName(w, c))
			continue
		case "import_alias":
			jsFlushExports(&exports)
			imports.add(c, w.text(firstNamed(c, "identifier")))
			continue
		case "lexical_declaration", "variable_declaration":
			if mods := jsRequires(w, c); mods != nil {
				jsFlushExports(&exports)
				imports.add(c, mods...)
				continue
			}
		case "export_statement":
			if field(c, "declaration") == nil && field(c, "value") == nil {
				imports.flush()
				exports.add(c, jsExportNames(w, c))
				continue
			}
		}
		flush()
		out = jsStatement(w, c, jsPrefix{}, out)
	}
	flush()
	return jsMergeOverloads(out)
}

// jsRequires returns the modules a CommonJS import declaration requires
// (const x = require('y'), const { a } = require('y').b), or nil when the
// declaration is something else.
func jsRequires(w *walker, c *sitter.Node) []string {
	var mods []string
	for _, d := range named(c) {
		if d.Type() != "variable_declarator" {
			continue
		}
		v := field(d, "value")
		for typ(v) == "member_expression" {
			v = field(v, "object")
		}
		if typ(v) != "call_expression" || w.text(field(v, "function")) != "require" {
			return nil
		}
		arg := firstNamed(field(v, "arguments"))
		if typ(arg) != "string" {
			return nil
		}
		mods = append(mods, unquote(w.text(arg)))
	}
	return mods
}

func jsFlushExports(r *importRun) {
	if r.first == nil {
		return
	}
	n := len(*r.out)
	r.flush()
	e := &(*r.out)[n]
	e.Name, e.Kind = "exports", KindExports
	e.Signature = "exports: " + strings.TrimPrefix(e.Signature, "imports: ")
}

func jsImportName(w *walker, n *sitter.Node) string {
	src := field(n, "source")
	if src == nil {
		if rc := firstNamed(n, "import_clause", "import_require_clause"); rc != nil {
			src = field(rc, "source")
		}
	}
	return unquote(w.text(src))
}

func jsExportNames(w *walker, n *sitter.Node) string {
	from := ""
	if src := field(n, "source"); src != nil {
		from = " from " + unquote(w.text(src))
	}
	if clause := firstNamed(n, "export_clause"); clause != nil {
		var names []string
		for _, s := range named(clause) {
			if s.Type() != "export_specifier" {
				continue
			}
			name := w.text(field(s, "name"))
			if a := field(s, "alias"); a != nil {
				name = w.text(a)
			}
			names = append(names, name)
		}
		return "{" + strings.Join(names, ", ") + "}" + from
	}
	if ns := firstNamed(n, "namespace_export"); ns != nil {
		return w.text(ns) + from
	}
	if from == "" {
		// export = Foo; export as namespace Foo
		return strings.TrimRight(collapse(strings.TrimPrefix(w.text(n), "export ")), ";")
	}
	return "*" + from
}

func unquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return strings.Trim(s, "'\"`")
}

// jsStatement appends the entries of one top-level statement c, wrapped in
// p: a declaration's entry (its members as children), what an export or a
// declare wraps, a namespace's entry followed by its contents, or a
// CommonJS assignment; any other statement adds nothing.
func jsStatement(w *walker, c *sitter.Node, p jsPrefix, out []Entry) []Entry {
	if p.outer == nil {
		p.outer = c
	}
	switch c.Type() {
	case "export_statement":
		return jsExport(w, c, p, out)
	case "ambient_declaration":
		return jsAmbient(w, c, p, out)
	case "expression_statement":
		x := firstNamed(c)
		switch typ(x) {
		case "internal_module":
			return jsStatement(w, x, p, out)
		case "assignment_expression":
			return jsAssignment(w, c, x, p, out)
		}
		return out
	case "internal_module", "module":
		return jsNamespace(w, c, p, out)
	case "function_declaration", "generator_function_declaration", "function_signature":
		name := w.text(field(c, "name"))
		e := w.entry(p.outer, KindFunc, name, collapse(p.text+w.head(c, field(c, "body"))))
		e.minor = !p.exported
		return append(out, e)
	case "class_declaration", "abstract_class_declaration", "class":
		name := w.text(field(c, "name"))
		return append(out, jsClass(w, c, name, p))
	case "interface_declaration":
		name := w.text(field(c, "name"))
		body := field(c, "body")
		e := w.entry(p.outer, KindInterface, name, collapse(p.text+w.head(c, body)))
		e.minor = !p.exported
		e.Children = jsMembers(w, body)
		return append(out, e)
	case "type_alias_declaration":
		name := w.text(field(c, "name"))
		e := w.entry(p.outer, KindType, name, collapse(p.text+w.line(c)))
		e.minor = !p.exported
		return append(out, e)
	case "enum_declaration":
		return append(out, jsEnum(w, c, p))
	case "lexical_declaration", "variable_declaration":
		return jsVariables(w, c, p, out)
	}
	return out
}

// jsExport appends the entries of an export statement that exports a
// declaration or a default value (the bare export lists are imports-like
// lines of walkJSStatements): its decorators and "export " or "export
// default " go into the prefix of what it wraps.
func jsExport(w *walker, c *sitter.Node, p jsPrefix, out []Entry) []Entry {
	p.exported = true
	var decos []string
	for _, d := range named(c) {
		if d.Type() == "decorator" {
			decos = append(decos, jsDecorator(w, d))
		}
	}
	kw := "export "
	if hasChild(c, "default") {
		kw = "export default "
	}
	p.text += strings.Join(append(decos, ""), " ") + kw
	if d := field(c, "declaration"); d != nil {
		return jsStatement(w, d, p, out)
	}
	v := field(c, "value")
	switch v.Type() {
	case "function_expression", "function", "arrow_function", "generator_function", "class":
		return append(out, jsValue(w, v, "default", p, c))
	}
	e := w.entry(c, KindVar, "default", collapse(p.text+w.line(v)))
	return append(out, e)
}

// jsAmbient appends the entries of a declare statement: the declarations it
// wraps, with "declare " in their prefix, or for `declare global { ... }`
// a module entry followed by the block's declarations.
func jsAmbient(w *walker, c *sitter.Node, p jsPrefix, out []Entry) []Entry {
	p.text += "declare "
	for _, d := range named(c) {
		switch d.Type() {
		case "statement_block": // declare global { ... }
			e := w.entry(c, KindModule, "global", "declare global")
			e.minor = !p.exported
			out = append(out, e)
			out = append(out, walkJSStatements(w, d)...)
		case "comment":
		default:
			out = jsStatement(w, d, p, out)
		}
	}
	return out
}

// jsNamespace appends a namespace or ambient module entry, then the
// declarations of its body as top-level entries.
func jsNamespace(w *walker, c *sitter.Node, p jsPrefix, out []Entry) []Entry {
	name := w.text(field(c, "name"))
	e := w.entry(p.outer, KindNamespace, unquote(name), collapse(p.text+w.head(c, field(c, "body"))))
	e.minor = !p.exported
	out = append(out, e)
	if body := field(c, "body"); body != nil {
		out = append(out, walkJSStatements(w, body)...)
	}
	return out
}

// jsEnum is the entry of an enum, its member names in the signature.
func jsEnum(w *walker, c *sitter.Node, p jsPrefix) Entry {
	name := w.text(field(c, "name"))
	var members []string
	for _, m := range named(field(c, "body")) {
		switch m.Type() {
		case "property_identifier", "string":
			members = append(members, w.text(m))
		case "enum_assignment":
			members = append(members, w.text(field(m, "name")))
		}
	}
	sig := collapse(p.text + w.head(c, field(c, "body")) + " { " + joinNames(members) + " }")
	e := w.entry(p.outer, KindEnum, name, sig)
	e.minor = !p.exported
	return e
}

// jsVariables appends one entry per declarator of a const, let or var
// declaration; a lone declarator's entry spans the whole statement.
func jsVariables(w *walker, c *sitter.Node, p jsPrefix, out []Entry) []Entry {
	kw := "var"
	if c.ChildCount() > 0 {
		kw = c.Child(0).Type() // const, let, var
	}
	decls := []*sitter.Node{}
	for _, d := range named(c) {
		if d.Type() == "variable_declarator" {
			decls = append(decls, d)
		}
	}
	for _, d := range decls {
		n := d
		if len(decls) == 1 {
			n = p.outer
		}
		out = append(out, jsDeclarator(w, d, kw, p, n))
	}
	return out
}

// jsDeclarator is the entry of one declarator d after the keyword kw,
// spanning n: a function or class value is a function or class, a module
// pattern (an immediately invoked function of many lines) a module whose
// children are the function's declarations, anything else a const or var.
func jsDeclarator(w *walker, d *sitter.Node, kw string, p jsPrefix, n *sitter.Node) Entry {
	name := w.text(field(d, "name"))
	if v := field(d, "value"); v != nil {
		switch v.Type() {
		case "function_expression", "function", "arrow_function", "generator_function", "class":
			q := p
			q.text += kw + " "
			e := jsValue(w, v, name, q, n)
			if t := field(d, "type"); t != nil {
				// const Button: FC<Props> = (...) =>
				e.Signature = collapse(strings.Replace(e.Signature, name+" = ", name+w.text(t)+" = ", 1))
			}
			return e
		}
	}
	kind := KindVar
	if kw == "const" {
		kind = KindConst
	}
	e := w.entry(n, kind, name, collapse(p.text+kw+" "+w.line(d)))
	e.minor = !p.exported
	if body := jsModuleBody(field(d, "value")); body != nil {
		// The module pattern: var Sizzle = (function(window) { ... })(window)
		e.Kind = KindModule
		for _, c := range walkJSStatements(w, body) {
			if c.Kind != KindImports && c.Kind != KindExports {
				c.Children = nil
				e.Children = append(e.Children, c)
			}
		}
	}
	return e
}

// jsModuleBody returns the body of an immediately invoked function that
// spans many lines: (function () { ... })(), (() => { ... })().
func jsModuleBody(v *sitter.Node) *sitter.Node {
	for typ(v) == "parenthesized_expression" {
		v = firstNamed(v)
	}
	if typ(v) != "call_expression" {
		return nil
	}
	f := field(v, "function")
	for typ(f) == "parenthesized_expression" {
		f = firstNamed(f)
	}
	switch typ(f) {
	case "function_expression", "function", "arrow_function":
		body := field(f, "body")
		if typ(body) == "statement_block" && body.EndPoint().Row-body.StartPoint().Row >= 10 {
			return body
		}
	}
	return nil
}

// jsValue makes the entry of a function or class value assigned to name;
// the entry spans n.
func jsValue(w *walker, v *sitter.Node, name string, p jsPrefix, n *sitter.Node) Entry {
	if v.Type() == "class" {
		q := p
		q.outer = n
		q.text += name + " = "
		return jsClass(w, v, name, q)
	}
	head := w.head(v, field(v, "body"))
	sig := p.text + name + " = " + head
	if strings.HasSuffix(p.text, "default ") {
		sig = p.text + head // export default function (...)
	}
	e := w.entry(n, KindFunc, name, collapse(sig))
	e.minor = !p.exported
	return e
}

// jsAssignment lists a CommonJS export or prototype method: module.exports
// = ..., exports.x = ..., X.prototype.y = function ...
func jsAssignment(w *walker, stmt, a *sitter.Node, p jsPrefix, out []Entry) []Entry {
	left, right := field(a, "left"), field(a, "right")
	if typ(left) != "member_expression" || right == nil {
		return out
	}
	name := w.text(left)
	isFunc := false
	switch right.Type() {
	case "function_expression", "function", "arrow_function", "generator_function", "class":
		isFunc = true
	}
	commonJS := name == "module.exports" || strings.HasPrefix(name, "exports.") || strings.HasPrefix(name, "module.exports.")
	if !commonJS && !isFunc {
		return out
	}
	if isFunc {
		e := jsValue(w, right, name, p, stmt)
		e.minor = !commonJS
		return append(out, e)
	}
	e := w.entry(stmt, KindVar, name, w.line(stmt))
	return append(out, e)
}

func jsDecorator(w *walker, d *sitter.Node) string {
	t := w.text(d)
	if i := strings.IndexAny(t, "(\n"); i >= 0 {
		t = t[:i]
	}
	return strings.TrimSpace(t)
}

func jsClass(w *walker, c *sitter.Node, name string, p jsPrefix) Entry {
	body := field(c, "body")
	var decos []string
	for _, d := range named(c) {
		if d.Type() == "decorator" {
			decos = append(decos, jsDecorator(w, d))
		}
	}
	from := c.StartByte()
	if len(decos) > 0 {
		// Skip the decorators: they are listed by name.
		for i := 0; i < int(c.ChildCount()); i++ {
			if k := c.Child(i); k.Type() != "decorator" {
				from = k.StartByte()
				break
			}
		}
	}
	sig := strings.Join(append(decos, ""), " ") + p.text + w.headFrom(from, c, body)
	outer := p.outer
	if outer == nil {
		outer = c
	}
	e := w.entry(outer, KindClass, name, collapse(sig))
	e.minor = !p.exported
	e.Children = jsMembers(w, body)
	return e
}

// jsMembers lists the members of a class or interface body.
func jsMembers(w *walker, body *sitter.Node) []Entry {
	var out []Entry
	for _, m := range named(body) {
		var e Entry
		switch m.Type() {
		case "method_definition", "method_signature", "abstract_method_signature":
			name := w.text(field(m, "name"))
			kind := KindMethod
			if name == "constructor" {
				kind = KindConstructor
			}
			e = w.entry(m, kind, name, w.head(m, field(m, "body")))
		case "public_field_definition", "field_definition", "property_signature":
			prop := field(m, "name")
			if prop == nil {
				prop = field(m, "property")
			}
			e = w.entry(m, KindField, w.text(prop), w.line(m))
		case "index_signature", "call_signature", "construct_signature":
			e = w.entry(m, KindMethod, "", w.line(m))
		default:
			continue
		}
		e.Signature = strings.TrimRight(e.Signature, ";,")
		e.minor = strings.HasPrefix(e.Name, "#") || hasModifier(w, m, "private")
		out = append(out, e)
	}
	return out
}

func hasModifier(w *walker, m *sitter.Node, mod string) bool {
	for _, c := range named(m) {
		if c.Type() == "accessibility_modifier" && w.text(c) == mod {
			return true
		}
	}
	return false
}

// jsMergeOverloads folds TypeScript overload signatures into the function
// that follows them: one entry spanning all, with the first signature.
func jsMergeOverloads(es []Entry) []Entry {
	out := es[:0]
	for _, e := range es {
		if n := len(out); n > 0 && e.Kind == KindFunc && out[n-1].Kind == KindFunc &&
			e.Name != "" && out[n-1].Name == e.Name && e.Line <= out[n-1].EndLine+1 {
			out[n-1].EndLine = e.EndLine
			continue
		}
		out = append(out, e)
	}
	return out
}
