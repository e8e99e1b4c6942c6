package outline

import "bytes"

// Macros that system headers put around declarations, which a grammar
// without a preprocessor takes for types, names or syntax errors:
//
//	__BEGIN_DECLS
//	extern int remove (const char *__filename) __THROW __nonnull ((1));
//
// blankCMacros replaces them (and the parenthesized arguments of those that
// take some) with spaces before a C or C++ file is parsed, so offsets and
// lines do not move.
var (
	cNoiseMacros = map[string]bool{
		"__BEGIN_DECLS": true, "__END_DECLS": true, "G_BEGIN_DECLS": true, "G_END_DECLS": true,
		"BEGIN_C_DECLS": true, "END_C_DECLS": true, "__BEGIN_NAMESPACE_STD": true, "__END_NAMESPACE_STD": true,
		"__THROW": true, "__THROWNL": true, "__wur": true, "__extension__": true,
		"__attribute_malloc__": true, "__attribute_pure__": true, "__attribute_const__": true,
		"__attribute_deprecated__": true, "__attribute_noinline__": true, "__attribute_used__": true,
		"__attribute_maybe_unused__": true, "__attribute_warn_unused_result__": true,
		"__returns_nonnull": true, "__attr_dealloc_free": true, "__attr_dealloc_fclose": true,
		"__always_inline": true, "__extern_inline": true, "__extern_always_inline": true,
		"__fortify_function": true,
	}
	cNoiseCalls = map[string]bool{
		"__attribute__": true, "__attribute": true, "__nonnull": true, "__attr_access": true,
		"__attr_access_none": true, "__fortified_attr_access": true, "__attr_dealloc": true,
		"__asm__": true, "__asm": true, "__attribute_format_arg__": true,
		"__attribute_format_strfmon__": true, "__attribute_alloc_size__": true,
		"__attribute_alloc_align__": true, "__declspec": true,
		"_GL_ATTRIBUTE_PURE": true, "__acquires": true, "__releases": true,
	}
)

// blankCMacros returns src with the noise macros blanked; it returns src
// itself when there are none.
func blankCMacros(src []byte) []byte {
	if !bytes.Contains(src, []byte("__")) && !bytes.Contains(src, []byte("_DECLS")) {
		return src
	}
	var out []byte
	blank := func(from, to int) {
		if out == nil {
			out = bytes.Clone(src)
		}
		for k := from; k < to; k++ {
			if out[k] != '\n' {
				out[k] = ' '
			}
		}
	}
	for i := 0; i < len(src); {
		c := src[i]
		if !isIdentStart(c) {
			i++
			continue
		}
		j := i + 1
		for j < len(src) && isIdentByte(src[j]) {
			j++
		}
		word := src[i:j]
		if (cNoiseMacros[string(word)] || cNoiseCalls[string(word)]) && afterDirective(src, i) {
			i = j // #define __attribute__(x) defines it: keep
			continue
		}
		switch {
		case cNoiseMacros[string(word)]:
			blank(i, j)
		case cNoiseCalls[string(word)]:
			end := j
			k := j
			for k < len(src) && (src[k] == ' ' || src[k] == '\t') {
				k++
			}
			if k < len(src) && src[k] == '(' {
				if close := matchParen(src, k); close > 0 {
					end = close + 1
				}
			}
			blank(i, end)
			j = end
		}
		i = j
	}
	if out == nil {
		return src
	}
	return out
}

// afterDirective reports whether the word at i follows #define, #undef,
// #ifdef, #ifndef or defined.
func afterDirective(src []byte, i int) bool {
	k := i
	for k > 0 && (src[k-1] == ' ' || src[k-1] == '\t' || src[k-1] == '(') {
		k--
	}
	before := src[max(0, k-7):k]
	for _, d := range []string{"define", "undef", "ifdef", "ifndef", "defined"} {
		if bytes.HasSuffix(before, []byte(d)) {
			return true
		}
	}
	return false
}

// matchParen returns the index of the parenthesis that closes the one at
// open, or -1; it gives up after 4 kB or at a ';' or '{' outside.
func matchParen(src []byte, open int) int {
	depth := 0
	for k := open; k < len(src) && k < open+4096; k++ {
		switch src[k] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return k
			}
		case ';', '{':
			return -1
		}
	}
	return -1
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdentByte(c byte) bool {
	return isIdentStart(c) || c >= '0' && c <= '9'
}

// looksCPP reports whether a .h file is C++: a class, namespace or template
// at the start of a line, or an access specifier.
func looksCPP(src []byte) bool {
	for _, kw := range [][]byte{[]byte("class "), []byte("namespace "), []byte("template<"), []byte("template <"), []byte("public:"), []byte("private:")} {
		for i := 0; ; {
			k := bytes.Index(src[i:], kw)
			if k < 0 {
				break
			}
			k += i
			// At the start of a line, after indentation.
			j := k
			for j > 0 && (src[j-1] == ' ' || src[j-1] == '\t') {
				j--
			}
			if j == 0 || src[j-1] == '\n' {
				return true
			}
			i = k + len(kw)
		}
	}
	return false
}

// stripComments returns s with its comments replaced by a space: // and
// /* */ in C-like languages, # in Python and Ruby. String and character
// literals are copied as they are.
func stripComments(s []byte, lang string) string {
	hash := lang == "python" || lang == "ruby"
	if !bytes.ContainsAny(s, "/#") {
		return string(s)
	}
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '`' || c == '\'' && lang != "rust":
			j := i + 1
			for j < len(s) && s[j] != c && s[j] != '\n' {
				if s[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			if j >= len(s) {
				j = len(s) - 1
			}
			b = append(b, s[i:j+1]...)
			i = j
			continue
		case hash && c == '#', !hash && c == '/' && i+1 < len(s) && s[i+1] == '/':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			b = append(b, ' ')
			if i < len(s) {
				b = append(b, '\n')
			}
			continue
		case !hash && c == '/' && i+1 < len(s) && s[i+1] == '*':
			k := bytes.Index(s[i+2:], []byte("*/"))
			if k < 0 {
				i = len(s)
			} else {
				i += k + 3
			}
			b = append(b, ' ')
			i--
			continue
		}
		b = append(b, c)
	}
	return string(b)
}
