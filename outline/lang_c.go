//go:build cgo

package outline

import (
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
)

// walkC outlines C and C++: function definitions and prototypes, global
// variables, typedefs, structs, unions, enums and classes with their members
// (C++ access specifiers mark private members), macros, C++ aliases and
// concepts. Preprocessor conditionals (include guards), extern "C" blocks,
// template headers and error-recovery nodes are unwrapped; a namespace is
// listed and its contents follow as top-level entries.
func walkC(w *walker, root *sitter.Node) []Entry {
	var out []Entry
	imports := importRun{out: &out}
	cDecls(w, root, &out, &imports, 0)
	imports.flush()
	return out
}

func cDecls(w *walker, list *sitter.Node, out *[]Entry, imports *importRun, depth int) {
	if depth > 64 {
		return
	}
	for _, c := range named(list) {
		switch c.Type() {
		case "comment", "preproc_call", "static_assert_declaration", "expression_statement", ";":
			continue
		case "preproc_include":
			imports.add(c, strings.TrimSpace(w.text(field(c, "path"))))
			continue
		case "using_declaration":
			imports.add(c, collapse(strings.TrimSuffix(strings.TrimPrefix(w.text(c), "using "), ";")))
			continue
		case "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef",
			"linkage_specification", "declaration_list", "ERROR":
			if c.Type() == "ERROR" && firstNamed(c, "function_declarator") != nil {
				// A prototype the grammar could not place, usually for a
				// macro after it: extern int f(int) __THROW;
				imports.flush()
				*out = append(*out, cDeclaration(w, c, c)...)
				continue
			}
			if c.Type() == "linkage_specification" {
				if b := field(c, "body"); b != nil && b.Type() != "declaration_list" {
					imports.flush()
					n := len(*out)
					cDecl(w, b, c, "", out)
					if len(*out) > n {
						(*out)[n].Signature = collapse(`extern "C" ` + (*out)[n].Signature)
					}
					continue
				}
			}
			cDecls(w, c, out, imports, depth+1)
			continue
		case "namespace_definition":
			imports.flush()
			name := w.text(field(c, "name"))
			if name == "" {
				name = "(anonymous)"
			}
			e := w.entry(c, KindNamespace, name, w.head(c, field(c, "body")))
			*out = append(*out, e)
			cDecls(w, field(c, "body"), out, imports, depth+1)
			continue
		}
		imports.flush()
		cDecl(w, c, c, "", out)
	}
}

// cDecl appends the entries of one declaration; outer is the node whose
// range the entries take (a template_declaration around c), prefix goes
// before the signature ("template<typename T> ").
func cDecl(w *walker, c, outer *sitter.Node, prefix string, out *[]Entry) {
	add := func(e Entry) {
		e.Signature = collapse(prefix + e.Signature)
		*out = append(*out, e)
	}
	switch c.Type() {
	case "template_declaration":
		params := collapse(w.text(field(c, "parameters")))
		for _, d := range named(c) {
			if d.Type() != "template_parameter_list" {
				cDecl(w, d, outer, prefix+"template"+params+" ", out)
			}
		}
	case "function_definition":
		d := field(c, "declarator")
		name, qualified := cName(w, d)
		kind := KindFunc
		if qualified {
			kind = KindMethod
		}
		e := w.entry(outer, kind, name, w.head(c, field(c, "body")))
		e.minor = cStatic(w, c)
		add(e)
	case "declaration":
		for _, e := range cDeclaration(w, c, outer) {
			add(e)
		}
	case "type_definition":
		add(cTypedef(w, c, outer))
	case "struct_specifier", "union_specifier", "enum_specifier", "class_specifier":
		if field(c, "body") == nil {
			return // a forward declaration
		}
		kind, members := cSpecifier(w, c)
		e := w.entry(outer, kind, w.text(field(c, "name")), w.head(c, field(c, "body")))
		if kind == KindEnum {
			e.Signature = w.head(c, field(c, "body")) + " { " + joinNames(memberNames(members)) + " }"
			members = nil
		}
		e.Children = members
		add(e)
	case "preproc_def", "preproc_function_def":
		e := w.entry(outer, KindMacro, w.text(field(c, "name")), w.line(c))
		e.minor = c.Type() == "preproc_def"
		add(e)
	case "alias_declaration", "namespace_alias_definition", "concept_definition":
		kind := KindType
		if c.Type() == "namespace_alias_definition" {
			kind = KindNamespace
		}
		add(w.entry(outer, kind, w.text(field(c, "name")), w.line(c)))
	}
}

// cTypedef returns the entry of a typedef: of the type it defines, with
// its members, when it defines one with a body; else a plain type.
func cTypedef(w *walker, c, outer *sitter.Node) Entry {
	var names []string
	for i := 0; i < int(c.ChildCount()); i++ {
		if c.FieldNameForChild(i) == "declarator" {
			n, _ := cName(w, c.Child(i))
			names = append(names, n)
		}
	}
	t := field(c, "type")
	body := field(t, "body")
	if body != nil {
		kind, members := cSpecifier(w, t)
		e := w.entry(outer, kind, strings.Join(names, ", "), "typedef "+w.head(t, body)+" "+strings.Join(names, ", "))
		e.Children = members
		return e
	}
	return w.entry(outer, KindType, strings.Join(names, ", "), w.head(c, nil))
}

// cDeclaration returns the entries of a declaration: a prototype, or the
// variables it declares (and a struct, union or enum it defines on the way).
func cDeclaration(w *walker, c, outer *sitter.Node) []Entry {
	var out []Entry
	if t := field(c, "type"); t != nil && field(t, "body") != nil {
		switch t.Type() {
		case "struct_specifier", "union_specifier", "enum_specifier", "class_specifier":
			kind, members := cSpecifier(w, t)
			e := w.entry(outer, kind, w.text(field(t, "name")), w.head(t, field(t, "body")))
			e.Children = members
			out = append(out, e)
		}
	}
	var vars []string
	for i := 0; i < int(c.ChildCount()); i++ {
		d := c.Child(i)
		if c.FieldNameForChild(i) != "declarator" && !(c.Type() == "ERROR" && d.Type() == "function_declarator") {
			continue
		}
		if d.Type() == "ERROR" {
			continue // a macro after the declarator: f(int) __THROW
		}
		name, qualified := cName(w, d)
		if cIsFunc(d) {
			kind := KindFunc
			if qualified {
				kind = KindMethod
			}
			e := w.entry(outer, kind, name, strings.TrimRight(w.head(c, nil), ";"))
			e.minor = cStatic(w, c)
			out = append(out, e)
			continue
		}
		vars = append(vars, name)
	}
	if len(vars) > 0 && !cMacroNoise(w.text(field(c, "type")), vars) {
		e := w.entry(outer, KindVar, strings.Join(vars, ", "), strings.TrimRight(w.line(c), ";"))
		e.minor = cStatic(w, c)
		out = append(out, e)
	}
	return out
}

// cMacroNoise reports a "declaration" that is only attribute macros the
// grammar took for a type and variables, as in glibc's headers:
// __attribute_malloc__ __attr_dealloc_fclose __wur;
func cMacroNoise(typ string, names []string) bool {
	if !strings.HasPrefix(typ, "__") {
		return false
	}
	for _, n := range names {
		if !strings.HasPrefix(n, "__") {
			return false
		}
	}
	return true
}

// cSpecifier returns the kind of a struct, union, enum or class and its
// members.
func cSpecifier(w *walker, t *sitter.Node) (string, []Entry) {
	body := field(t, "body")
	switch t.Type() {
	case "enum_specifier":
		var out []Entry
		for _, e := range named(body) {
			if e.Type() == "enumerator" {
				out = append(out, w.entry(e, KindConst, w.text(field(e, "name")), w.line(e)))
			}
		}
		return KindEnum, out
	case "union_specifier":
		return KindUnion, cMembers(w, body, false)
	case "class_specifier":
		return KindClass, cMembers(w, body, true)
	}
	return KindStruct, cMembers(w, body, false)
}

func memberNames(es []Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	return out
}

// cMembers lists the members of a struct, union or class body; private says
// whether members are private until an access specifier says otherwise.
func cMembers(w *walker, body *sitter.Node, private bool) []Entry {
	var out []Entry
	var visit func(list *sitter.Node, depth int)
	visit = func(list *sitter.Node, depth int) {
		for _, m := range named(list) {
			var es []Entry
			switch m.Type() {
			case "access_specifier":
				private = strings.TrimSpace(w.text(m)) != "public"
				continue
			case "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef":
				if depth < 8 {
					visit(m, depth+1)
				}
				continue
			case "field_declaration", "declaration":
				es = cField(w, m)
			case "function_definition":
				name, _ := cName(w, field(m, "declarator"))
				es = []Entry{w.entry(m, KindMethod, name, w.head(m, field(m, "body")))}
			case "template_declaration":
				for _, d := range named(m) {
					switch d.Type() {
					case "function_definition", "declaration", "field_declaration":
						name, _ := cName(w, field(d, "declarator"))
						params := collapse(w.text(field(m, "parameters")))
						es = append(es, w.entry(m, KindMethod, name, "template"+params+" "+strings.TrimRight(w.head(d, field(d, "body")), ";")))
					}
				}
			case "alias_declaration", "type_definition":
				name := w.text(field(m, "name"))
				if name == "" {
					name, _ = cName(w, field(m, "declarator"))
				}
				es = []Entry{w.entry(m, KindType, name, strings.TrimRight(w.line(m), ";"))}
			default:
				continue
			}
			for i := range es {
				if es[i].Kind == KindMethod {
					es[i].Kind = cMethodKind(es[i].Name, w.text(field(body.Parent(), "name")))
				}
				es[i].minor = private
			}
			out = append(out, es...)
		}
	}
	visit(body, 0)
	return out
}

func cMethodKind(name, class string) string {
	if name == class || name == "~"+class {
		return KindConstructor
	}
	return KindMethod
}

// cField returns the entries of a member declaration: methods, data members,
// or a nested struct, union, enum or class.
func cField(w *walker, m *sitter.Node) []Entry {
	var out []Entry
	if t := field(m, "type"); t != nil && field(t, "body") != nil {
		switch t.Type() {
		case "struct_specifier", "union_specifier", "enum_specifier", "class_specifier":
			kind, _ := cSpecifier(w, t)
			out = append(out, w.entry(m, kind, w.text(field(t, "name")), w.head(t, field(t, "body"))))
		}
	}
	var vars []string
	for i := 0; i < int(m.ChildCount()); i++ {
		if m.FieldNameForChild(i) != "declarator" {
			continue
		}
		d := m.Child(i)
		name, _ := cName(w, d)
		if cIsFunc(d) {
			out = append(out, w.entry(m, KindMethod, name, strings.TrimRight(w.head(m, nil), ";")))
			continue
		}
		vars = append(vars, name)
	}
	if len(vars) > 0 {
		out = append(out, w.entry(m, KindField, strings.Join(vars, ", "), strings.TrimRight(w.line(m), ";")))
	}
	return out
}

// cName follows a declarator down to the declared name; qualified reports a
// C++ out-of-line definition (W::draw). The name is the last component.
func cName(w *walker, d *sitter.Node) (string, bool) {
	qualified := false
	for i := 0; d != nil && i < 32; i++ {
		switch d.Type() {
		case "identifier", "field_identifier", "type_identifier", "destructor_name", "operator_name",
			"primitive_type", "namespace_identifier":
			return w.text(d), qualified
		case "qualified_identifier":
			qualified = true
			d = field(d, "name")
		case "template_function", "template_method", "template_type":
			d = field(d, "name")
		default:
			next := field(d, "declarator")
			if next == nil {
				next = firstNamed(d, "identifier", "field_identifier", "type_identifier", "qualified_identifier",
					"destructor_name", "operator_name", "function_declarator", "pointer_declarator",
					"reference_declarator", "array_declarator", "parenthesized_declarator", "init_declarator",
					"attributed_declarator", "template_function")
			}
			d = next
		}
	}
	return "", qualified
}

// cIsFunc reports whether a declarator declares a function (not a pointer
// to one).
func cIsFunc(d *sitter.Node) bool {
	for i := 0; d != nil && i < 32; i++ {
		switch d.Type() {
		case "function_declarator":
			inner := field(d, "declarator")
			return typ(inner) != "parenthesized_declarator"
		case "pointer_declarator", "reference_declarator", "attributed_declarator":
			next := field(d, "declarator")
			if next == nil {
				next = firstNamed(d, "function_declarator", "pointer_declarator", "reference_declarator")
			}
			d = next
		default:
			return false
		}
	}
	return false
}

// cStatic reports a static (file-local) C declaration.
func cStatic(w *walker, n *sitter.Node) bool {
	for _, c := range named(n) {
		if c.Type() == "storage_class_specifier" && w.text(c) == "static" {
			return true
		}
	}
	return false
}
