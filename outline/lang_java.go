//go:build cgo

package outline

import (
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
)

// walkJava outlines a Java file: the package, the imports on one line, and
// each class, interface, enum, record and annotation type with its members
// (methods, constructors, fields, constants, nested types). A range starts
// at the annotations; signatures leave them out.
func walkJava(w *walker, root *sitter.Node) []Entry {
	var out []Entry
	imports := importRun{out: &out}
	for _, c := range named(root) {
		switch c.Type() {
		case "line_comment", "block_comment":
			continue
		case "import_declaration":
			imports.add(c, collapse(strings.TrimSuffix(strings.TrimPrefix(w.text(c), "import "), ";")))
			continue
		}
		imports.flush()
		switch c.Type() {
		case "package_declaration":
			out = append(out, w.entry(c, KindPackage, w.text(firstNamed(c, "scoped_identifier", "identifier")), strings.TrimSuffix(w.line(c), ";")))
		case "module_declaration":
			out = append(out, w.entry(c, KindModule, w.text(field(c, "name")), w.head(c, field(c, "body"))))
		default:
			if e, ok := javaDecl(w, c, true); ok {
				out = append(out, e)
			}
		}
	}
	imports.flush()
	return out
}

// javaDecl returns the entry of a type or member declaration; top says
// whether a type's members are listed.
func javaDecl(w *walker, c *sitter.Node, top bool) (Entry, bool) {
	name := w.text(field(c, "name"))
	body := field(c, "body")
	var e Entry
	switch c.Type() {
	case "class_declaration", "interface_declaration", "enum_declaration", "record_declaration", "annotation_type_declaration":
		kind := map[string]string{
			"class_declaration":           KindClass,
			"interface_declaration":       KindInterface,
			"enum_declaration":            KindEnum,
			"record_declaration":          KindClass,
			"annotation_type_declaration": KindInterface,
		}[c.Type()]
		e = w.entry(c, kind, name, javaHead(w, c, body))
		if c.Type() == "enum_declaration" {
			var consts []string
			for _, k := range named(body) {
				if k.Type() == "enum_constant" {
					consts = append(consts, w.text(field(k, "name")))
				}
			}
			e.Signature = collapse(e.Signature + " { " + joinNames(consts) + " }")
		}
		if top {
			e.Children = javaMembers(w, body)
		}
	case "method_declaration", "annotation_type_element_declaration":
		e = w.entry(c, KindMethod, name, strings.TrimRight(javaHead(w, c, body), ";"))
	case "constructor_declaration", "compact_constructor_declaration":
		e = w.entry(c, KindConstructor, name, javaHead(w, c, body))
	case "field_declaration", "constant_declaration":
		var names []string
		for i := 0; i < int(c.ChildCount()); i++ {
			if c.FieldNameForChild(i) == "declarator" {
				names = append(names, w.text(field(c.Child(i), "name")))
			}
		}
		kind := KindField
		if c.Type() == "constant_declaration" {
			kind = KindConst
		}
		// Modifiers, type and names, without initializers.
		sig := javaHead(w, c, field(c, "type"))
		if sig != "" {
			sig += " "
		}
		sig += collapse(w.text(field(c, "type"))) + " " + strings.Join(names, ", ")
		e = w.entry(c, kind, strings.Join(names, ", "), collapse(sig))
	default:
		return Entry{}, false
	}
	e.minor = javaPrivate(w, c)
	return e, true
}

func javaMembers(w *walker, body *sitter.Node) []Entry {
	var out []Entry
	for _, m := range named(body) {
		if m.Type() == "enum_body_declarations" {
			out = append(out, javaMembers(w, m)...)
			continue
		}
		if e, ok := javaDecl(w, m, false); ok {
			out = append(out, e)
		}
	}
	return out
}

// javaHead is the head of a declaration without its annotations: the
// modifier keywords, then the rest up to the body.
func javaHead(w *walker, c, body *sitter.Node) string {
	mods := firstNamed(c, "modifiers")
	if mods == nil {
		return w.head(c, body)
	}
	var kw []string
	for i := 0; i < int(mods.ChildCount()); i++ {
		k := mods.Child(i)
		switch k.Type() {
		case "annotation", "marker_annotation", "line_comment", "block_comment":
			continue
		}
		kw = append(kw, w.text(k))
	}
	rest := w.headFrom(mods.EndByte(), c, body)
	return collapse(strings.Join(append(kw, rest), " "))
}

func javaPrivate(w *walker, c *sitter.Node) bool {
	mods := firstNamed(c, "modifiers")
	if mods == nil {
		return false
	}
	for i := 0; i < int(mods.ChildCount()); i++ {
		if mods.Child(i).Type() == "private" {
			return true
		}
	}
	return false
}
