package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/reika-lsp/reika-lsp/internal/regular"
)

// grep's fast path: ripgrep (rg) searches the files the walk chose,
// and Go checks every line it reports. The results are grep's own either
// way, since:
//
//   - the files are the walk's (.gitignore, the glob filter, the size cap),
//     given to rg by name; a file the editor serves from a buffer is read
//     through Env.Files and searched in Go, as is every file when Files
//     cannot say which those are (OverlaidFiles);
//   - rg's pattern is the Go pattern rewritten (ripgrepPattern) so that it
//     matches every line the Go pattern matches, and more at times: Go's
//     regexp decides each line rg reports, and prints it as searchGo does;
//   - binary files are skipped as searchGo skips them (a NUL in the first
//     8000 bytes), rg reading every file as text;
//   - the results are written in the walk's order, whatever order rg's
//     threads found them in.
//
// rg runs on chunks of files; a chunk rg cannot search (it refuses the
// pattern, or fails) is searched in Go.

// ripgrepMinBytes is the least a search reads for ripgrep to pay for
// starting it (about 5 ms a run). Measured on the Go distribution (best of
// 5; Go, then rg): in bufio (0.1 MB) 2.5 and 6 ms for \bNewReader\b; in
// encoding/json (2 MB) 36 and 8 ms, but 12 and 18 ms for err, which Go's
// literal search finds fast and on 4390 lines; in cmd/compile (20 MB) 513
// and 24 ms, 98 and 34 ms for err. A variable for tests.
var ripgrepMinBytes int64 = 1 << 20

// ripgrepRuns counts the chunks rg searched to the end, for tests.
var ripgrepRuns atomic.Int64

// Bounds of one chunk of files given to rg: its command line, and what
// its results can hold before they are written out in order.
const (
	ripgrepChunkArgs  = 128 << 10
	ripgrepChunkBytes = 64 << 20
)

// ripgrepPath is the rg to run, "" when none is installed or it is older
// than 11 (this is written against the flags of 11 to 13; Debian bookworm
// has 13.0.0).
var ripgrepPath = sync.OnceValue(func() string {
	p, err := exec.LookPath("rg")
	if err != nil {
		return ""
	}
	out, err := exec.Command(p, "--version").Output()
	if err != nil {
		return ""
	}
	var major int
	if _, err := fmt.Sscanf(string(out), "ripgrep %d.", &major); err != nil || major < 11 {
		return ""
	}
	return p
})

// worthRipgrep reports whether a search of files reads enough for rg.
func worthRipgrep(files []searchFile) bool {
	var total int64
	for _, f := range files {
		total += f.size
	}
	return total >= ripgrepMinBytes
}

// searchRipgrep is search with rg at rg, whose pattern is expr
// (ripgrepPattern of re's).
func (env *Env) searchRipgrep(ctx context.Context, rg, expr string, out *output, files []searchFile, re *regexp.Regexp) (matches, withMatches int, err error) {
	if env.Files != nil {
		if _, ok := env.Files.(OverlaidFiles); !ok {
			return env.searchGo(ctx, out, files, re)
		}
	}
	inMemory := map[string]bool{}
	if of, ok := env.files().(OverlaidFiles); ok {
		for _, p := range of.OverlaidPaths() {
			inMemory[p] = true
		}
	}
	for len(files) > 0 {
		n, args, size := 0, 0, int64(0)
		for n < len(files) && (n == 0 || args+len(files[n].abs) < ripgrepChunkArgs && size+files[n].size < ripgrepChunkBytes) {
			args += len(files[n].abs) + 1
			size += files[n].size
			n++
		}
		chunk := files[:n]
		files = files[n:]
		var disk []string
		for _, f := range chunk {
			if !inMemory[f.abs] {
				disk = append(disk, f.abs)
			}
		}
		var found map[string][]rgLine
		ok := false
		if rg != "" {
			found, ok = runRipgrep(ctx, rg, expr, disk)
		}
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
		if !ok {
			rg = "" // it would refuse the next chunks too
		}
		for _, f := range chunk {
			var n int
			if inMemory[f.abs] || !ok {
				n = env.grepRead(out, f, re)
			} else if lines := found[f.abs]; len(lines) > 0 && !binaryFile(f.abs) {
				for _, l := range lines {
					if grepLine(out, f.name, l.number, l.text, re) {
						n++
					}
				}
			}
			matches += n
			if n > 0 {
				withMatches++
			}
		}
	}
	return matches, withMatches, nil
}

// binaryFile reports whether the file at path is binary as isBinary
// decides, reading only what that needs; an unreadable file is binary
// (searchGo skips it too).
func binaryFile(path string) bool {
	f, err := regular.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	head := make([]byte, 8000)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return true
	}
	return isBinary(head[:n])
}

// rgLine is a line rg reported: its number and text, without the newline.
type rgLine struct {
	number int
	text   []byte
}

// runRipgrep searches paths with rg for expr and returns the lines it
// reports by path. ok is false when rg did not finish a search (it refused
// the pattern, failed or was stopped): the caller searches in Go instead.
// Files rg cannot read are left out, as searchGo leaves them.
//
// rg writes each line as path NUL number : text. Its --json, which says
// the same with a summary at the end, took more than half of a search
// with many matches (7603 lines of net/http) to decode; this form costs a
// split.
func runRipgrep(ctx context.Context, rg, expr string, paths []string) (found map[string][]rgLine, ok bool) {
	if len(paths) == 0 {
		return nil, true
	}
	args := []string{"--no-config", "--no-messages", "--text", "--encoding", "none", "--no-ignore", "--hidden",
		"--case-sensitive", "--color", "never", "--no-heading", "--with-filename", "--line-number", "--null",
		"--regexp", expr, "--"}
	cmd := exec.CommandContext(ctx, rg, append(args, paths...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, false
	}
	if err := cmd.Start(); err != nil {
		return nil, false
	}
	found = map[string][]rgLine{}
	parsed := true
	r := bufio.NewReaderSize(stdout, 64<<10)
	for {
		rec, err := r.ReadBytes('\n')
		if len(rec) > 0 {
			if l, path, ok := parseRipgrepLine(rec); ok {
				found[path] = append(found[path], l)
			} else {
				parsed = false
			}
		}
		if err != nil {
			break
		}
	}
	err = cmd.Wait()
	// Exit 1 is no match; 2 an error: an unreadable file (said nothing,
	// with --no-messages) or one with the pattern (said on stderr).
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || exit.ExitCode() == 2 && stderr.Len() > 0 || exit.ExitCode() > 2) {
		return nil, false
	}
	if !parsed || ctx.Err() != nil {
		return nil, false
	}
	ripgrepRuns.Add(1)
	return found, true
}

// parseRipgrepLine reads one line of rg's output: path NUL number : text,
// and a newline (which the last line of a file may lack).
func parseRipgrepLine(rec []byte) (l rgLine, path string, ok bool) {
	nul := bytes.IndexByte(rec, 0)
	if nul < 0 {
		return rgLine{}, "", false
	}
	path, rest := string(rec[:nul]), rec[nul+1:]
	colon := bytes.IndexByte(rest, ':')
	if colon < 0 {
		return rgLine{}, "", false
	}
	n, err := strconv.Atoi(string(rest[:colon]))
	if err != nil {
		return rgLine{}, "", false
	}
	return rgLine{number: n, text: bytes.TrimSuffix(rest[colon+1:], []byte{'\n'})}, path, true
}

// ripgrepPattern rewrites a Go regular expression for rg so that it
// matches every line the Go one matches in grep (a line without its
// newline and a \r ending it, read as UTF-8 with each invalid byte a
// U+FFFD); Go's own matching then decides. It spells out what the two
// syntaxes read differently: classes and case folding become explicit
// classes of Go's runes, \b Go's ASCII word boundary, ^ and $ line
// boundaries ($ also before a \r\n), and whatever matches U+FFFD
// matches any non-ASCII byte too. ok is false for what rg cannot
// be asked (a pattern that matches nothing, or only a newline): grep then
// searches in Go.
func ripgrepPattern(pattern string) (expr string, ok bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil || assertionsTangled(re) {
		return "", false
	}
	var b strings.Builder
	if !writeRipgrep(&b, re) {
		return "", false
	}
	return b.String(), true
}

// assertionsTangled reports whether re tests an assertion (^, $, \b, \B)
// where rg and Go would not agree: right after a $ (rg's $ has taken the
// \r that Go's line is cut before, and rg would test one byte late), or
// before a ^ (where rg 13 misses matches after the first line). Read left
// to right (each branch of an alternation from where it starts): an
// assertion after a $, a ^ after an assertion, or an anchor and another
// assertion in one repetition.
func assertionsTangled(re *syntax.Regexp) bool {
	seen, seenEnd := false, false
	var walk func(re *syntax.Regexp) (assertions, anchors int, tangled bool)
	walk = func(re *syntax.Regexp) (assertions, anchors int, tangled bool) {
		switch re.Op {
		case syntax.OpEndLine, syntax.OpEndText:
			tangled = seenEnd
			seen, seenEnd = true, true
			return 1, 1, tangled
		case syntax.OpBeginLine, syntax.OpBeginText:
			tangled = seen
			seen = true
			return 1, 1, tangled
		case syntax.OpWordBoundary, syntax.OpNoWordBoundary:
			tangled = seenEnd
			seen = true
			return 1, 0, tangled
		}
		startSeen, startEnd := seen, seenEnd
		endSeen, endEnd := seen, seenEnd
		for _, sub := range re.Sub {
			if re.Op == syntax.OpAlternate {
				// Each branch follows what came before the alternation.
				seen, seenEnd = startSeen, startEnd
			}
			a, n, t := walk(sub)
			if t {
				return 0, 0, true
			}
			assertions += a
			anchors += n
			endSeen, endEnd = endSeen || seen, endEnd || seenEnd
		}
		seen, seenEnd = endSeen, endEnd
		switch re.Op {
		case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
			if anchors > 0 && assertions > 1 {
				return 0, 0, true
			}
		}
		return assertions, anchors, false
	}
	_, _, tangled := walk(re)
	return tangled
}

// invalidByte matches a byte that is not UTF-8 on its own (and, at times,
// one of a rune's: Go decides).
const invalidByte = `(?-u:[\x80-\xFF])`

func writeRipgrep(b *strings.Builder, re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpEmptyMatch:
		b.WriteString("(?:)")
	case syntax.OpLiteral:
		return writeLiteral(b, re)
	case syntax.OpCharClass:
		return writeClass(b, re.Rune)
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteString(`(?:[^\n]|` + invalidByte + `)`)
	case syntax.OpBeginLine, syntax.OpBeginText:
		b.WriteString("(?m:^)")
	case syntax.OpEndLine, syntax.OpEndText:
		b.WriteString(`(?:\r?(?m:$))`) // Go's line ends before a \r\n too
	case syntax.OpWordBoundary:
		b.WriteString(`(?-u:\b)`)
	case syntax.OpNoWordBoundary:
		b.WriteString(`(?-u:\B)`)
	case syntax.OpCapture:
		return writeGroup(b, re.Sub[0], "")
	case syntax.OpStar:
		return writeGroup(b, re.Sub[0], "*")
	case syntax.OpPlus:
		return writeGroup(b, re.Sub[0], "+")
	case syntax.OpQuest:
		return writeGroup(b, re.Sub[0], "?")
	case syntax.OpRepeat:
		rep := "{" + strconv.Itoa(re.Min) + ","
		if re.Max >= 0 {
			rep += strconv.Itoa(re.Max)
		}
		return writeGroup(b, re.Sub[0], rep+"}")
	case syntax.OpConcat:
		b.WriteString("(?:")
		for _, sub := range re.Sub {
			if !writeRipgrep(b, sub) {
				return false
			}
		}
		b.WriteString(")")
	case syntax.OpAlternate:
		b.WriteString("(?:")
		for i, sub := range re.Sub {
			if i > 0 {
				b.WriteByte('|')
			}
			if !writeRipgrep(b, sub) {
				return false
			}
		}
		b.WriteString(")")
	default: // OpNoMatch, and any op to come
		return false
	}
	return true
}

// writeLiteral writes a literal as a group of its runes; a rune folded
// for case, a newline or one ripgrep cannot spell goes as a class.
func writeLiteral(b *strings.Builder, re *syntax.Regexp) bool {
	b.WriteString("(?:")
	for _, r := range re.Rune {
		if re.Flags&syntax.FoldCase == 0 && r != '\n' && r != utf8.RuneError && !utf16.IsSurrogate(r) {
			b.WriteString(rustLiteral(r))
			continue
		}
		set := []rune{r, r}
		if re.Flags&syntax.FoldCase != 0 {
			set = nil
			for f := r; ; {
				set = append(set, f, f)
				if f = unicode.SimpleFold(f); f == r {
					break
				}
			}
		}
		if !writeClass(b, set) {
			return false
		}
	}
	b.WriteString(")")
	return true
}

// writeGroup writes sub as a group followed by op.
func writeGroup(b *strings.Builder, sub *syntax.Regexp, op string) bool {
	b.WriteString("(?:")
	if !writeRipgrep(b, sub) {
		return false
	}
	b.WriteString(")" + op)
	return true
}

// writeClass writes the runes of ranges (lo, hi pairs) that a line can
// hold: without the newline, without surrogates (no UTF-8 holds them),
// and with any non-ASCII byte when the class holds U+FFFD. It is false
// when no rune is left.
func writeClass(b *strings.Builder, ranges []rune) bool {
	var parts []string
	replacement := false
	add := func(lo, hi rune) {
		if lo > hi {
			return
		}
		if lo == hi {
			parts = append(parts, rustRune(lo))
		} else {
			parts = append(parts, rustRune(lo)+"-"+rustRune(hi))
		}
	}
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], min(ranges[i+1], unicode.MaxRune)
		if lo <= utf8.RuneError && utf8.RuneError <= hi {
			replacement = true
		}
		for _, cut := range [][2]rune{{'\n', '\n'}, {0xD800, 0xDFFF}} {
			if lo <= cut[1] && cut[0] <= hi {
				add(lo, cut[0]-1)
				lo = cut[1] + 1
			}
		}
		add(lo, hi)
	}
	if len(parts) == 0 {
		return false
	}
	b.WriteString("(?:[" + strings.Join(parts, "") + "]")
	if replacement {
		b.WriteString("|" + invalidByte)
	}
	b.WriteString(")")
	return true
}

// rustLiteral spells r as itself in rg's (Rust's) syntax.
func rustLiteral(r rune) string {
	if r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
		return string(r)
	}
	return rustRune(r)
}

// rustRune spells r for a class of rg's (Rust's) syntax.
func rustRune(r rune) string { return `\x{` + strconv.FormatInt(int64(r), 16) + `}` }
