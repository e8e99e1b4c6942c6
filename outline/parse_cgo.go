//go:build cgo

package outline

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"time"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/c"
	"github.com/smacker/go-tree-sitter/cpp"
	"github.com/smacker/go-tree-sitter/golang"
	"github.com/smacker/go-tree-sitter/java"
	"github.com/smacker/go-tree-sitter/javascript"
	"github.com/smacker/go-tree-sitter/python"
	"github.com/smacker/go-tree-sitter/ruby"
	"github.com/smacker/go-tree-sitter/rust"
	"github.com/smacker/go-tree-sitter/typescript/tsx"
	"github.com/smacker/go-tree-sitter/typescript/typescript"
)

// The rules of smacker/go-tree-sitter (docs/design.md §6) this file keeps:
//   - every tree is closed in the function that parsed it, before the
//     outline (plain Go values) is returned; nodes never escape;
//   - a parser is used by one goroutine at a time: it is taken from its
//     language's free list and put back (or closed) after the parse;
//   - parses get context.Background(), never a cancellable context (a cancel
//     right after a fast parse poisons the parser); time is bounded with
//     SetOperationLimit (a timeout in µs) and the parser is Reset after a
//     parse that stopped early;
//   - no queries or cursors are used: the outline walks named children.

// hasTreeSitter: this build parses with tree-sitter.
const hasTreeSitter = true

// grammar is one language's tree-sitter grammar, its free parsers and its
// outline walker.
type grammar struct {
	lang *sitter.Language
	free chan *sitter.Parser
	walk func(w *walker, root *sitter.Node) []Entry
}

var grammars map[string]*grammar

// slots bounds the parses running at once, and so the C memory of live
// trees (25-36 times the source size each).
var slots chan struct{}

// Counters of live C objects, for tests.
var liveTrees, liveParsers atomic.Int64

func init() {
	n := runtime.GOMAXPROCS(0)
	slots = make(chan struct{}, n)
	g := func(l *sitter.Language, walk func(*walker, *sitter.Node) []Entry) *grammar {
		return &grammar{lang: l, free: make(chan *sitter.Parser, n), walk: walk}
	}
	grammars = map[string]*grammar{
		"go":         g(golang.GetLanguage(), walkGo),
		"python":     g(python.GetLanguage(), walkPython),
		"javascript": g(javascript.GetLanguage(), walkJS),
		"typescript": g(typescript.GetLanguage(), walkJS),
		"tsx":        g(tsx.GetLanguage(), walkJS),
		"rust":       g(rust.GetLanguage(), walkRust),
		"c":          g(c.GetLanguage(), walkC),
		"cpp":        g(cpp.GetLanguage(), walkC),
		"java":       g(java.GetLanguage(), walkJava),
		"ruby":       g(ruby.GetLanguage(), walkRuby),
	}
}

func (g *grammar) parser() *sitter.Parser {
	select {
	case p := <-g.free:
		return p
	default:
	}
	p := sitter.NewParser()
	p.SetLanguage(g.lang)
	liveParsers.Add(1)
	return p
}

func (g *grammar) release(p *sitter.Parser) {
	select {
	case g.free <- p:
	default:
		p.Close()
		liveParsers.Add(-1)
	}
}

// outline parses src and walks its tree; the tree is closed before it
// returns. A bug in a walker on an odd tree is an error, not a crash of the
// agent.
func (g *grammar) outline(lang string, src []byte, timeout time.Duration) (o *Outline, err error) {
	defer func() {
		if r := recover(); r != nil {
			o, err = nil, fmt.Errorf("%w: %s outline: %v\n%s", errInternal, lang, r, debug.Stack())
		}
	}()
	p := g.parser()
	defer g.release(p)
	us := 0
	if timeout > 0 {
		us = int(timeout / time.Microsecond)
		if us == 0 {
			us = 1
		}
	}
	p.SetOperationLimit(us)
	tree, err := p.ParseCtx(context.Background(), nil, src)
	if err != nil || tree == nil {
		// The parser would resume this parse on its next call.
		p.Reset()
		if err == nil || errors.Is(err, sitter.ErrOperationLimit) {
			return nil, ErrTimeout
		}
		return nil, err
	}
	liveTrees.Add(1)
	defer func() {
		tree.Close()
		liveTrees.Add(-1)
	}()
	root := tree.RootNode()
	w := &walker{src: src, lang: lang}
	o = &Outline{Lang: lang, Entries: g.walk(w, root), Partial: root.HasError()}
	if !hasDecls(o.Entries) {
		if alt := w.fallback(root, o.Entries); len(alt) > 0 {
			o.Entries = append(o.Entries, alt...)
			sortEntries(o.Entries)
			o.Fallback = true
		}
	}
	return o, nil
}

// parse is the cgo implementation behind ParseLimited.
func parse(lang string, src []byte, timeout time.Duration) (*Outline, error) {
	g := grammars[lang]
	if g == nil {
		return nil, ErrNoOutline
	}
	slots <- struct{}{}
	defer func() { <-slots }()
	if lang == "c" || lang == "cpp" {
		src = blankCMacros(src)
	}
	first, second := lang, ""
	if lang == "c" {
		// A .h file may be C++: try the likelier grammar first, the other
		// when it reads the file with errors, and keep the better.
		second = "cpp"
		if looksCPP(src) {
			first, second = "cpp", "c"
		}
	}
	o, err := grammars[first].outline(first, src, timeout)
	if err != nil || !o.Partial || second == "" {
		return o, err
	}
	if alt, err := grammars[second].outline(second, src, timeout); err == nil && !alt.Partial {
		return alt, nil
	}
	return o, nil
}

func hasDecls(es []Entry) bool {
	for _, e := range es {
		if e.Kind != KindImports && e.Kind != KindStatement {
			return true
		}
	}
	return false
}
