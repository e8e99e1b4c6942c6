//go:build cgo

package outline

import (
	"strings"

	sitter "github.com/smacker/go-tree-sitter"
)

// walkRuby outlines a Ruby file: methods, classes with their members
// (methods, class methods including those in `class << self`, constants,
// attr_*, include/extend and other class-level calls), constants and
// aliases. A module is listed with its own methods and constants, and the
// classes and modules inside it follow as top-level entries. require,
// require_relative and load are the imports. `private` marks the methods
// after it.
func walkRuby(w *walker, root *sitter.Node) []Entry {
	var out []Entry
	imports := importRun{out: &out}
	for _, c := range named(root) {
		if c.Type() == "call" && rubyRequire(w, c) {
			imports.add(c, rubyArgs(w, c)...)
			continue
		}
		if c.Type() == "comment" {
			continue
		}
		imports.flush()
		rubyTop(w, c, &out, 0)
	}
	imports.flush()
	return out
}

func rubyRequire(w *walker, c *sitter.Node) bool {
	if field(c, "receiver") != nil {
		return false
	}
	switch w.text(field(c, "method")) {
	case "require", "require_relative", "load", "autoload":
		return true
	}
	return false
}

// rubyArgs returns the arguments of a call as plain words: strings without
// quotes, symbols without their colon.
func rubyArgs(w *walker, c *sitter.Node) []string {
	var out []string
	for _, a := range named(field(c, "arguments")) {
		switch a.Type() {
		case "string":
			out = append(out, w.text(firstNamed(a, "string_content")))
		case "simple_symbol":
			out = append(out, strings.TrimPrefix(w.text(a), ":"))
		default:
			out = append(out, collapse(w.text(a)))
		}
	}
	return out
}

// rubyTop appends the entries of a top-level (or module-level) node.
func rubyTop(w *walker, c *sitter.Node, out *[]Entry, depth int) {
	switch c.Type() {
	case "module", "class":
		kind := KindClass
		if c.Type() == "module" {
			kind = KindModule
		}
		body := field(c, "body")
		e := w.entry(c, kind, w.text(field(c, "name")), w.head(c, body))
		var nested []*sitter.Node
		e.Children, nested = rubyMembers(w, body, kind == KindModule)
		*out = append(*out, e)
		if depth < 16 {
			for _, n := range nested {
				rubyTop(w, n, out, depth+1)
			}
		}
	case "call":
		// A top-level DSL call (describe, task, get): listed by the
		// fallback when the file declares nothing.
	default:
		if e, ok := rubyMember(w, c, false); ok {
			if e.Kind == KindMethod {
				e.Kind = KindFunc
			}
			*out = append(*out, e)
		}
	}
}

// rubyMembers lists the members of a class or module body. In a module,
// nested classes and modules are returned to be listed at the top level.
func rubyMembers(w *walker, body *sitter.Node, module bool) (members []Entry, nested []*sitter.Node) {
	private := false
	for _, m := range named(body) {
		switch m.Type() {
		case "identifier":
			switch w.text(m) {
			case "private", "protected":
				private = true
			case "public":
				private = false
			}
			continue
		case "module", "class":
			if module {
				nested = append(nested, m)
				continue
			}
		case "singleton_class":
			for _, k := range named(field(m, "body")) {
				if e, ok := rubyMember(w, k, private); ok {
					if strings.HasPrefix(e.Signature, "def ") {
						e.Signature = "def self." + strings.TrimPrefix(e.Signature, "def ")
					}
					members = append(members, e)
				}
			}
			continue
		}
		if e, ok := rubyMember(w, m, private); ok {
			members = append(members, e)
		}
	}
	return members, nested
}

// rubyMember returns the entry of a member; private is the visibility in
// force.
func rubyMember(w *walker, m *sitter.Node, private bool) (Entry, bool) {
	switch m.Type() {
	case "method", "singleton_method":
		name := w.text(field(m, "name"))
		end := field(m, "parameters")
		if end == nil {
			end = field(m, "name")
		}
		sig := collapse(string(w.src[m.StartByte():end.EndByte()]))
		kind := KindMethod
		if name == "initialize" {
			kind = KindConstructor
		}
		e := w.entry(m, kind, name, sig)
		e.minor = private
		return e, true
	case "class", "module":
		kind := KindClass
		if m.Type() == "module" {
			kind = KindModule
		}
		return w.entry(m, kind, w.text(field(m, "name")), w.head(m, field(m, "body"))), true
	case "assignment":
		left := field(m, "left")
		if typ(left) != "constant" && typ(left) != "scope_resolution" {
			return Entry{}, false
		}
		return w.entry(m, KindConst, w.text(left), w.line(m)), true
	case "alias":
		return w.entry(m, KindMethod, w.text(field(m, "name")), w.line(m)), true
	case "call":
		if field(m, "receiver") != nil {
			return Entry{}, false
		}
		method := w.text(field(m, "method"))
		switch method {
		case "private", "protected", "public", "private_class_method", "module_function":
			// private def x ... end
			if def := firstNamed(field(m, "arguments"), "method", "singleton_method"); def != nil {
				e, ok := rubyMember(w, def, method != "public" && method != "module_function")
				e.Line, _ = span(m)
				e.Signature = collapse(method + " " + e.Signature)
				return e, ok
			}
			return Entry{}, false
		}
		e := w.entry(m, KindField, strings.Join(rubyArgs(w, m), ", "), w.line(m))
		e.minor = !strings.HasPrefix(method, "attr_")
		return e, true
	}
	return Entry{}, false
}
