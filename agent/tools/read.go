package tools

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/reika-lsp/reika-lsp/ctxwin"
	"github.com/reika-lsp/reika-lsp/internal/regular"
)

//go:embed read.md
var readDescription string

// Read limits. A read without end_line returns at most ReadLines lines; any
// read stops before its text would pass ReadBytes; each line is cut at
// ReadLineBytes. Files larger than ReadWholeBytes, and files in the temp dir,
// are read from disk line by line (bounded memory, no outline).
const (
	ReadLines      = 2000
	ReadBytes      = 256 << 10
	ReadLineBytes  = 2000
	ReadWholeBytes = 16 << 20
)

type readTool struct{}

// readParams are read's parameters (params.go).
type readParams struct {
	Path      string      `json:"path" jsonschema:"File path, relative to the workspace root."`
	StartLine OptionalInt `json:"start_line,omitempty" jsonschema:"First line to read (1-based). Default 1."`
	EndLine   OptionalInt `json:"end_line,omitempty" jsonschema:"Last line to read, inclusive. Default start_line+1999."`
}

var readDecl = Declare[readParams]()

func (readTool) Spec() ctxwin.ToolSpec {
	return readDecl.Spec(NameRead, strings.TrimSpace(readDescription))
}

// Run reads the lines asked for of one text file, numbered, with a header
// naming the range and a footer saying how to continue when lines are
// left. Anything it cannot read is an error result, never an error.
func (readTool) Run(ctx context.Context, env *Env, raw json.RawMessage) (ctxwin.Result, error) {
	p, start, end, err := readArgs(raw)
	if err != nil {
		return errResult(ctxwin.KindRead, "%v", err), nil
	}
	pl, err := env.resolve(p)
	if err != nil {
		return errResult(ctxwin.KindRead, "%v", err), nil
	}
	if err := env.allowRead(ctx, NameRead, pl); err != nil {
		return errResult(ctxwin.KindRead, "%v", err), nil
	}
	src, err := openForRead(env, pl)
	if err != nil {
		return errResult(ctxwin.KindRead, "%v", err), nil
	}
	defer src.close()
	return readLines(pl, src, start, end), nil
}

// readArgs parses the read tool's arguments: the path, and the range of
// lines asked for (start_line 0 or absent is 1; end_line absent is
// ReadLines lines on). The error is the tool's error text.
func readArgs(raw json.RawMessage) (path string, start, end int, err error) {
	p, err := readDecl.Decode(raw)
	if err != nil {
		return "", 0, 0, err
	}
	path, start, end = p.Path, p.StartLine.N, p.EndLine.N
	hasStart, hasEnd := p.StartLine.Set, p.EndLine.Set
	if !hasStart || start == 0 {
		start = 1 // 0 is taken as "from the top", as models count from 0 at times
	}
	if start < 0 {
		return "", 0, 0, fmt.Errorf("start_line must be 1 or more, not %d", start)
	}
	if hasEnd && end < start {
		return "", 0, 0, fmt.Errorf("end_line %d is before start_line %d", end, start)
	}
	if !hasEnd {
		end = start + ReadLines - 1
	}
	return path, start, end, nil
}

// readSource is a file opened for read.
type readSource struct {
	r     io.Reader
	data  []byte // the whole file when it was read into memory, else nil
	size  int64  // the file's size on disk, or len(data) when not on disk
	close func() // releases the file; always set
}

// openForRead opens pl for read: a file in the temp dir or larger than
// ReadWholeBytes is read from disk as it goes; any other is read whole,
// from the editor's buffer when one is open (it may not be on disk yet).
// A directory, a special file or a file that does not exist is an error
// whose text is the tool's.
func openForRead(env *Env, pl place) (readSource, error) {
	fi, statErr := os.Stat(pl.Abs)
	if statErr == nil && fi.IsDir() {
		return readSource{}, fmt.Errorf("%s is a directory, not a file; list its files with glob (path %q, pattern \"*\")", pl.Rel, pl.Rel)
	}
	if err := notSpecial(pl); err != nil {
		return readSource{}, err
	}
	if statErr == nil && (pl.Temp || fi.Size() > ReadWholeBytes) {
		f, err := regular.Open(pl.Abs)
		if err != nil {
			return readSource{}, fmt.Errorf("cannot read %s: %w", pl.Rel, plainErr(err))
		}
		return readSource{r: f, size: fi.Size(), close: func() { f.Close() }}, nil
	}
	data, err := env.files().ReadFile(pl.Abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return readSource{}, fmt.Errorf("%s does not exist", pl.Rel)
		}
		return readSource{}, fmt.Errorf("cannot read %s: %w", pl.Rel, plainErr(err))
	}
	size := int64(len(data))
	if statErr == nil {
		size = fi.Size()
	}
	return readSource{r: bytes.NewReader(data), data: data, size: size, close: func() {}}, nil
}

// readLines is the read tool's result for lines start..end of src, the
// file at pl: an error for a binary file or a start past the end.
func readLines(pl place, src readSource, start, end int) ctxwin.Result {
	r := bufio.NewReaderSize(src.r, 64<<10)
	if peek, _ := r.Peek(8000); isBinary(peek) {
		return errResult(ctxwin.KindRead, "%s is a binary file (%s); read shows text files only", pl.Rel, sizeString(src.size))
	}
	lines, total, err := readRange(r, start, end)
	if err != nil {
		return errResult(ctxwin.KindRead, "cannot read %s: %v", pl.Rel, plainErr(err))
	}
	if total == 0 {
		return ctxwin.Result{Kind: ctxwin.KindRead, Text: pl.Rel + " lines 0-0 of 0\n(empty file)\n", Summary: "Read " + pl.Rel + " lines 0-0 of 0", Path: pl.Rel, Source: src.data}
	}
	if start > total {
		return errResult(ctxwin.KindRead, "start_line %d is past the end of %s, which has %d lines", start, pl.Rel, total)
	}
	body, last := numberLines(lines, start)
	text := fmt.Sprintf("%s lines %d-%d of %d\n", pl.Rel, start, last, total) + body
	if last < total {
		text += fmt.Sprintf("(%d more lines; continue with start_line %d)\n", total-last, last+1)
	}
	return ctxwin.Result{
		Kind:       ctxwin.KindRead,
		Text:       text,
		Summary:    fmt.Sprintf("Read %s lines %d-%d of %d", pl.Rel, start, last, total),
		Path:       pl.Rel,
		StartLine:  start,
		EndLine:    last,
		TotalLines: total,
		Source:     src.data,
	}
}

// numberLines prefixes lines, the first being line start, with their
// numbers, right-aligned; the text stops before it would pass ReadBytes
// (the first line is always kept). last is the number of the last line in
// the text.
func numberLines(lines []string, start int) (text string, last int) {
	last = start + len(lines) - 1
	width := len(strconv.Itoa(last))
	var body strings.Builder
	for i, l := range lines {
		n := start + i
		if body.Len()+len(l)+width+2 > ReadBytes && i > 0 {
			last = n - 1
			break
		}
		fmt.Fprintf(&body, "%*d→%s\n", width, n, l)
	}
	return body.String(), last
}

// readRange returns lines start..end (1-based, inclusive; end beyond the
// file is fine) without their line endings, each cut at ReadLineBytes, and
// the number of lines in the file. Memory stays bounded by the lines kept,
// however long the file or its lines.
func readRange(r *bufio.Reader, start, end int) (lines []string, total int, err error) {
	kept := 0      // bytes kept; past ReadBytes no more lines are kept
	var cur []byte // the current line, up to ReadLineBytes
	curLen := 0
	inLine := false
	for {
		chunk, err := r.ReadSlice('\n')
		if len(chunk) > 0 {
			inLine = true
			n := total + 1
			if n >= start && n <= end && kept <= ReadBytes {
				if room := ReadLineBytes - len(cur); room > 0 {
					cur = append(cur, chunk[:min(room, len(chunk))]...)
				}
				curLen += len(chunk)
			}
			if chunk[len(chunk)-1] == '\n' {
				if n >= start && n <= end && kept <= ReadBytes {
					lines = append(lines, lineText(cur, curLen-1))
					kept += len(cur)
				}
				total++
				cur, curLen, inLine = cur[:0], 0, false
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, err
		}
	}
	if inLine {
		n := total + 1
		if n >= start && n <= end && kept <= ReadBytes {
			lines = append(lines, lineText(cur, curLen))
		}
		total++
	}
	return lines, total, nil
}

// lineText is one line for display: without its line ending, and with a
// note when it was cut. full is the line's length without its newline.
func lineText(kept []byte, full int) string {
	s := strings.TrimRight(string(kept), "\r\n")
	if full > ReadLineBytes {
		s = string(trimPartialRune([]byte(s))) + fmt.Sprintf("… [line cut: %d bytes]", full)
	}
	return s
}

// plainErr drops the "open /abs/path:" prefix of a *PathError.
func plainErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
