//go:build cgo

package outline

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	sitter "github.com/smacker/go-tree-sitter"
)

// walkGo outlines a Go file: functions, methods, each type spec (structs
// with their fields, interfaces with their methods), const and var
// declarations (a parenthesized group is one entry with a child per spec),
// and the imports on one line.
func walkGo(w *walker, root *sitter.Node) []Entry {
	var out []Entry
	imports := importRun{out: &out}
	for _, c := range named(root) {
		switch c.Type() {
		case "comment", "package_clause":
			continue
		case "import_declaration":
			imports.add(c, goImportPaths(w, c)...)
			continue
		}
		imports.flush()
		switch c.Type() {
		case "function_declaration":
			name := w.text(field(c, "name"))
			e := w.entry(c, KindFunc, name, w.head(c, field(c, "body")))
			e.minor = !goExported(name)
			out = append(out, e)
		case "method_declaration":
			name := w.text(field(c, "name"))
			e := w.entry(c, KindMethod, name, w.head(c, field(c, "body")))
			e.minor = !goExported(name) || !goExported(goReceiverType(w, c))
			out = append(out, e)
		case "type_declaration":
			out = append(out, goTypes(w, c)...)
		case "const_declaration", "var_declaration":
			out = append(out, goValues(w, c))
		}
	}
	imports.flush()
	return out
}

func goImportPaths(w *walker, decl *sitter.Node) []string {
	var specs []*sitter.Node
	for _, c := range named(decl) {
		switch c.Type() {
		case "import_spec":
			specs = append(specs, c)
		case "import_spec_list":
			for _, s := range named(c) {
				if s.Type() == "import_spec" {
					specs = append(specs, s)
				}
			}
		}
	}
	var out []string
	for _, s := range specs {
		p := w.text(field(s, "path"))
		if u, err := strconv.Unquote(p); err == nil {
			p = u
		}
		out = append(out, p)
	}
	return out
}

func goExported(name string) bool {
	r, _ := utf8.DecodeRuneInString(name)
	return unicode.IsUpper(r)
}

// goReceiverType returns the base type name of a method's receiver.
func goReceiverType(w *walker, m *sitter.Node) string {
	t := w.text(field(m, "receiver"))
	t = strings.Trim(t, "()")
	if f := strings.Fields(t); len(f) > 0 {
		t = f[len(f)-1]
	}
	t = strings.TrimLeft(t, "*")
	if i := strings.IndexByte(t, '['); i >= 0 {
		t = t[:i]
	}
	return t
}

// goTypes returns one entry per type spec of a type declaration. An entry
// of a declaration without parentheses spans the whole declaration.
func goTypes(w *walker, decl *sitter.Node) []Entry {
	grouped := hasChild(decl, "(")
	var out []Entry
	for _, spec := range named(decl) {
		if spec.Type() != "type_spec" && spec.Type() != "type_alias" {
			continue
		}
		name := w.text(field(spec, "name"))
		t := field(spec, "type")
		kind, sig := KindType, "type "+w.head(spec, nil)
		var members []Entry
		switch typ(t) {
		case "struct_type":
			kind = KindStruct
			sig = "type " + w.headFrom(spec.StartByte(), spec, t) + " struct"
			members = goFields(w, t)
		case "interface_type":
			kind = KindInterface
			sig = "type " + w.headFrom(spec.StartByte(), spec, t) + " interface"
			members = goInterface(w, t)
		}
		n := spec
		if !grouped {
			n = decl
		}
		e := w.entry(n, kind, name, sig)
		e.Children = members
		e.minor = !goExported(name)
		out = append(out, e)
	}
	return out
}

func goFields(w *walker, st *sitter.Node) []Entry {
	var out []Entry
	for _, f := range named(firstNamed(st, "field_declaration_list")) {
		if f.Type() != "field_declaration" {
			continue
		}
		var names []string
		for _, c := range named(f) {
			if c.Type() == "field_identifier" {
				names = append(names, w.text(c))
			}
		}
		t := field(f, "type")
		if len(names) == 0 { // embedded
			names = []string{strings.TrimLeft(w.text(t), "*")}
		}
		e := w.entry(f, KindField, strings.Join(names, ", "), w.head(f, field(f, "tag")))
		e.minor = !goExported(names[0])
		out = append(out, e)
	}
	return out
}

func goInterface(w *walker, it *sitter.Node) []Entry {
	var out []Entry
	for _, m := range named(it) {
		switch m.Type() {
		case "method_elem":
			name := w.text(field(m, "name"))
			e := w.entry(m, KindMethod, name, w.head(m, nil))
			e.minor = !goExported(name)
			out = append(out, e)
		case "type_elem":
			out = append(out, w.entry(m, KindType, w.text(m), w.head(m, nil)))
		}
	}
	return out
}

// goValues returns the entry of a const or var declaration. A parenthesized
// group becomes one entry with a child per spec.
func goValues(w *walker, decl *sitter.Node) Entry {
	kind := KindConst
	if decl.Type() == "var_declaration" {
		kind = KindVar
	}
	var specs []*sitter.Node
	for _, c := range named(decl) {
		switch c.Type() {
		case "const_spec", "var_spec":
			specs = append(specs, c)
		case "var_spec_list":
			for _, s := range named(c) {
				if s.Type() == "var_spec" {
					specs = append(specs, s)
				}
			}
		}
	}
	grouped := hasChild(decl, "(") || typ(firstNamed(decl, "var_spec_list")) != ""
	if !grouped && len(specs) == 1 {
		names := goSpecNames(w, specs[0])
		e := w.entry(decl, kind, strings.Join(names, ", "), w.line(decl))
		e.minor = !anyExported(names)
		return e
	}
	e := w.entry(decl, kind, "", "")
	var all []string
	for _, s := range specs {
		names := goSpecNames(w, s)
		all = append(all, names...)
		c := w.entry(s, kind, strings.Join(names, ", "), w.line(s))
		c.minor = !anyExported(names)
		e.Children = append(e.Children, c)
	}
	if len(all) > 0 {
		e.Name = all[0]
	}
	e.minor = !anyExported(all)
	e.Signature = kind + " (" + joinNames(all) + ")"
	return e
}

func goSpecNames(w *walker, spec *sitter.Node) []string {
	var names []string
	for _, c := range named(spec) {
		if c.Type() == "identifier" {
			names = append(names, w.text(c))
		}
	}
	return names
}

func anyExported(names []string) bool {
	for _, n := range names {
		if goExported(n) {
			return true
		}
	}
	return false
}
