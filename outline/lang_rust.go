//go:build cgo

package outline

import (
	sitter "github.com/smacker/go-tree-sitter"
)

// walkRust outlines a Rust file: functions, structs and unions with their
// fields, enums with their variants, traits and impls with their items, type
// aliases, consts, statics, macros and top-level macro invocations. An
// inline `mod` is listed and its items follow as top-level entries; the
// items of an `extern "C"` block are listed as top-level entries. A range
// starts at the attributes (#[derive(...)]) right above an item.
func walkRust(w *walker, root *sitter.Node) []Entry {
	var out []Entry
	imports := importRun{out: &out}
	rustItems(w, root, &out, &imports)
	imports.flush()
	return out
}

func rustItems(w *walker, list *sitter.Node, out *[]Entry, imports *importRun) {
	attrStart := 0 // line of the first attribute right above the next item
	for _, c := range named(list) {
		switch c.Type() {
		case "line_comment", "block_comment", "inner_attribute_item":
			continue
		case "attribute_item":
			if attrStart == 0 {
				attrStart, _ = span(c)
			}
			continue
		case "use_declaration", "extern_crate_declaration":
			attrStart = 0
			imports.add(c, collapse(w.text(firstNamed(c, "scoped_use_list", "scoped_identifier", "identifier", "use_wildcard", "use_as_clause", "use_list", "crate"))))
			if c.Type() == "extern_crate_declaration" {
				imports.names[len(imports.names)-1] = "crate " + w.text(field(c, "name"))
			}
			continue
		}
		imports.flush()
		n := len(*out)
		switch c.Type() {
		case "mod_item":
			body := field(c, "body")
			e := w.entry(c, KindModule, w.text(field(c, "name")), w.head(c, body))
			e.minor = !rustPub(c)
			*out = append(*out, e)
			if body != nil {
				rustItems(w, body, out, imports)
				imports.flush()
			}
		case "foreign_mod_item":
			rustItems(w, field(c, "body"), out, imports)
			imports.flush()
		default:
			if e, ok := rustItem(w, c, true); ok {
				*out = append(*out, e)
			}
		}
		if attrStart > 0 && len(*out) > n && (*out)[n].Line > attrStart {
			(*out)[n].Line = attrStart
		}
		attrStart = 0
	}
}

// rustItem returns the entry of one item; top is false inside an impl or
// trait (functions are methods there).
func rustItem(w *walker, c *sitter.Node, top bool) (Entry, bool) {
	name := w.text(field(c, "name"))
	var e Entry
	switch c.Type() {
	case "function_item", "function_signature_item":
		kind := KindFunc
		if !top {
			kind = KindMethod
		}
		e = w.entry(c, kind, name, w.head(c, field(c, "body")))
	case "struct_item", "union_item":
		kind := KindStruct
		if c.Type() == "union_item" {
			kind = KindUnion
		}
		body := field(c, "body")
		if typ(body) == "field_declaration_list" {
			e = w.entry(c, kind, name, w.head(c, body))
			e.Children = rustFields(w, body)
		} else {
			e = w.entry(c, kind, name, w.head(c, nil)) // tuple or unit struct
		}
	case "enum_item":
		body := field(c, "body")
		e = w.entry(c, KindEnum, name, w.head(c, body))
		for _, v := range named(body) {
			if v.Type() == "enum_variant" {
				e.Children = append(e.Children, w.entry(v, KindField, w.text(field(v, "name")), w.line(v)))
			}
		}
	case "trait_item":
		e = rustBlock(w, c, KindTrait, name)
	case "impl_item":
		name = w.text(field(c, "type"))
		if t := field(c, "trait"); t != nil {
			name = w.text(t) + " for " + name
		}
		e = rustBlock(w, c, KindImpl, name)
		e.minor = false
		return e, true
	case "type_item", "associated_type":
		e = w.entry(c, KindType, name, w.line(c))
	case "const_item":
		e = w.entry(c, KindConst, name, w.line(c))
	case "static_item":
		e = w.entry(c, KindVar, name, w.line(c))
	case "macro_definition":
		e = w.entry(c, KindMacro, name, "macro_rules! "+name)
	case "macro_invocation":
		name = w.text(field(c, "macro"))
		e = w.entry(c, KindMacro, name, w.line(c))
		return e, true
	default:
		return Entry{}, false
	}
	e.minor = !rustPub(c)
	return e, true
}

// rustBlock returns the entry of a trait or an impl with its items.
func rustBlock(w *walker, c *sitter.Node, kind, name string) Entry {
	body := field(c, "body")
	e := w.entry(c, kind, name, w.head(c, body))
	for _, m := range named(body) {
		if me, ok := rustItem(w, m, false); ok {
			if kind == KindTrait {
				me.minor = false // trait items are as public as the trait
			}
			e.Children = append(e.Children, me)
		}
	}
	return e
}

func rustFields(w *walker, body *sitter.Node) []Entry {
	var out []Entry
	for _, f := range named(body) {
		if f.Type() != "field_declaration" {
			continue
		}
		e := w.entry(f, KindField, w.text(field(f, "name")), w.line(f))
		e.minor = !rustPub(f)
		out = append(out, e)
	}
	return out
}

func rustPub(n *sitter.Node) bool {
	return firstNamed(n, "visibility_modifier") != nil
}
