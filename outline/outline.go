// Package outline builds outlines of source files — their top-level
// declarations with line ranges, kinds and one-line signatures, and the
// members of classes, structs, impls and interfaces one level deep — and the
// repo map of a workspace from them.
//
// An outline is what a shed file read keeps (docs/design.md §3.7): the model still
// knows what is where in a file it no longer sees. The repo map in the fixed
// prefix of every request (§4) lists the workspace's files with their key
// declarations, most referenced first.
//
// Parsing uses tree-sitter (github.com/smacker/go-tree-sitter) when the
// package is built with cgo; without cgo, Parse reports ErrNoOutline for
// every file and the repo map lists files without declarations.
//
// The package imports nothing of this repository but internal/walk, which is
// standard-library only.
package outline

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Entry is one declaration of an outline.
type Entry struct {
	// Name is the declared identifier ("Serve", "Server", "__init__"). A Go
	// const or var spec that declares several names lists them joined by
	// ", "; an import or export line is named "imports" or "exports".
	Name string `json:"name"`
	// Kind is one of the Kind* constants.
	Kind string `json:"kind"`
	// Line and EndLine are the 1-based range of the declaration, inclusive.
	// Line includes decorators, annotations and template headers.
	Line    int `json:"line"`
	EndLine int `json:"endLine"`
	// Signature is the declaration's head on one line: whitespace collapsed,
	// bodies left out, at most MaxSignature bytes.
	Signature string `json:"signature"`
	// Children are the members of a class, struct, impl, interface, enum or
	// Go const/var group, one level deep.
	Children []Entry `json:"children"`

	// minor marks an entry that budgets drop before the others: one not
	// visible outside its file, module or class (lower case in Go, a leading
	// underscore in Python, no export in JavaScript, no pub in Rust, static
	// in C, private in Java and C++), or a constant-like macro.
	minor bool
}

// Kinds of entries.
const (
	KindFunc        = "func"
	KindMethod      = "method"
	KindConstructor = "constructor"
	KindClass       = "class"
	KindStruct      = "struct"
	KindUnion       = "union"
	KindInterface   = "interface"
	KindTrait       = "trait"
	KindImpl        = "impl"
	KindEnum        = "enum"
	KindType        = "type"
	KindConst       = "const"
	KindVar         = "var"
	KindField       = "field"
	KindModule      = "module"
	KindNamespace   = "namespace"
	KindMacro       = "macro"
	KindImports     = "imports"
	KindExports     = "exports"
	KindPackage     = "package"
	KindStatement   = "statement" // a top-level statement of a file without declarations
	KindLines       = "lines"     // a leading line of a file with neither declarations nor statements
)

// MaxSignature bounds Entry.Signature in bytes; longer heads end in "…".
const MaxSignature = 160

// Outline is the outline of one file.
type Outline struct {
	Path    string  // as given to Parse
	Lang    string  // "go", "python", "javascript", "typescript", "tsx", "rust", "c", "cpp", "java", "ruby"
	Lines   int     // lines in the file
	Entries []Entry // in source order
	// Partial is set when the file has syntax errors: declarations around
	// them may be missing or cut short.
	Partial bool
	// Fallback is set when the file declares nothing at the top level (a
	// script, a whole-file IIFE): Entries are then its top-level statements,
	// or the declarations inside the function that wraps the whole file.
	Fallback bool
}

// Errors of Parse. Summary turns all of them into "".
var (
	// ErrNoOutline: the file's language is not one outline knows.
	ErrNoOutline = errors.New("no outline for this file type")
	// ErrBinary: the file is not text.
	ErrBinary = errors.New("binary file")
	// ErrTooLarge: the file is larger than Limits.MaxBytes.
	ErrTooLarge = errors.New("file too large to outline")
	// ErrTimeout: parsing took longer than Limits.Timeout.
	ErrTimeout = errors.New("outline timed out")

	// errInternal: a bug of this package on some file (a panic, recovered).
	errInternal = errors.New("internal error")
)

// Limits bound the work Parse does on one file.
type Limits struct {
	// Timeout bounds the parse of one file (tree-sitter's own clock; the
	// parser is reset and reused after a timeout). Zero means no bound.
	Timeout time.Duration
	// MaxBytes is the largest file parsed. Zero means no bound.
	MaxBytes int
}

// DefaultLimits are the limits of Parse and Summary: a 1.9 MB generated Go
// file parses in about 0.4 s on a slow core.
var DefaultLimits = Limits{Timeout: 2 * time.Second, MaxBytes: 2 << 20}

// DefaultSummaryBudget is a sensible budget, in characters, for the outline
// of one shed file read.
const DefaultSummaryBudget = 2000

// Parse returns the outline of the file at path, whose content is src. The
// language is chosen by the file's extension (or its #! line). It is safe to
// call from several goroutines; at most GOMAXPROCS parses run at once.
func Parse(path string, src []byte) (*Outline, error) {
	return ParseLimited(path, src, DefaultLimits)
}

// ParseLimited is Parse with explicit limits.
func ParseLimited(path string, src []byte, lim Limits) (*Outline, error) {
	lang := Detect(path, src)
	if lang == "" {
		ext := filepath.Ext(path)
		if ext == "" {
			ext = filepath.Base(path)
		}
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrNoOutline, ext)
	}
	if IsBinary(src) {
		return nil, fmt.Errorf("%s: %w", path, ErrBinary)
	}
	if lim.MaxBytes > 0 && len(src) > lim.MaxBytes {
		return nil, fmt.Errorf("%s: %w (%d bytes, limit %d)", path, ErrTooLarge, len(src), lim.MaxBytes)
	}
	o, err := parse(lang, src, lim.Timeout)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	o.Path = path
	if o.Lang == "" {
		o.Lang = lang // a .h file may have been read as C++
	}
	o.Lines = countLines(src)
	if len(o.Entries) == 0 {
		// Nothing declared and nothing run (a doc.go, a docstring-only
		// module): its first lines still say what the file is.
		o.Entries = leadingLines(src, maxLeadingLines)
		o.Fallback = len(o.Entries) > 0
	}
	return o, nil
}

// maxLeadingLines is how many lines a file without declarations keeps.
const maxLeadingLines = 3

// leadingLines lists the first n non-blank lines of src, past a leading
// block that is only a copyright or licence notice.
func leadingLines(src []byte, n int) []Entry {
	lines := strings.Split(string(src), "\n")
	start := 0
	// Skip the first block (up to a blank line) when it is a notice.
	end := 0
	for end < len(lines) && strings.TrimSpace(lines[end]) != "" {
		end++
	}
	if notice.MatchString(strings.Join(lines[:end], "\n")) {
		start = end
	}
	var out []Entry
	for i := start; i < len(lines) && len(out) < n; i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" {
			continue
		}
		out = append(out, Entry{Kind: KindLines, Line: i + 1, EndLine: i + 1, Signature: line})
	}
	return out
}

var notice = regexp.MustCompile(`(?i)copyright|licen[cs]e|spdx-`)

// Summary renders the outline of the file at path (content src) for a shed
// read summary, within budget characters, ending with a line saying how many
// entries were left out when some were. It returns "" when the file has no
// outline (unknown extension, binary, too large, a parse that timed out).
// It is safe to call from several goroutines.
func Summary(path string, src []byte, budget int) string {
	o, err := Parse(path, src)
	if err != nil {
		return ""
	}
	return o.Render(budget)
}

// SummaryLines is Summary for a read of lines from to to of the file: the
// outline of the declarations those lines show (Outline.RenderLines).
func SummaryLines(path string, src []byte, from, to, budget int) string {
	o, err := Parse(path, src)
	if err != nil {
		return ""
	}
	return o.RenderLines(from, to, budget)
}

// IsBinary reports whether src looks like binary data: a NUL byte in its
// first 8000 bytes, as git decides.
func IsBinary(src []byte) bool {
	head := src
	if len(head) > 8000 {
		head = head[:8000]
	}
	return bytes.IndexByte(head, 0) >= 0
}

func countLines(src []byte) int {
	if len(src) == 0 {
		return 0
	}
	n := bytes.Count(src, []byte{'\n'})
	if src[len(src)-1] != '\n' {
		n++
	}
	return n
}

// collapse returns s on one line: runs of white space become one space, and
// the result is cut to MaxSignature bytes (on a rune boundary) with "…".
func collapse(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v' {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
		if b.Len() > MaxSignature {
			break
		}
	}
	out := b.String()
	if len(out) > MaxSignature {
		cut := MaxSignature - len("…")
		for cut > 0 && !isRuneStart(out[cut]) {
			cut--
		}
		out = strings.TrimRight(out[:cut], " ") + "…"
	}
	return out
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
