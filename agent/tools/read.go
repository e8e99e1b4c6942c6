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

const readUsage = `{"path": string, "start_line"?: integer, "end_line"?: integer}`

func (readTool) Spec() ctxwin.ToolSpec {
	return ctxwin.ToolSpec{Name: NameRead, Description: strings.TrimSpace(readDescription), Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string","description":"File path, relative to the workspace root."},"start_line":{"type":"integer","description":"First line to read (1-based). Default 1."},"end_line":{"type":"integer","description":"Last line to read, inclusive. Default start_line+1999."}},"required":["path"],"additionalProperties":false}`)}
}

func (readTool) Run(ctx context.Context, env *Env, raw json.RawMessage) (ctxwin.Result, error) {
	a := parseArgs(raw, readUsage)
	p := a.str("path", true)
	start, hasStart := a.integer("start_line")
	end, hasEnd := a.integer("end_line")
	if a.err != nil {
		return errResult(ctxwin.KindRead, "%v", a.err), nil
	}
	if !hasStart || start == 0 {
		start = 1 // 0 is taken as "from the top", as models count from 0 at times
	}
	if start < 0 {
		return errResult(ctxwin.KindRead, "start_line must be 1 or more, not %d", start), nil
	}
	if hasEnd && end < start {
		return errResult(ctxwin.KindRead, "end_line %d is before start_line %d", end, start), nil
	}
	if !hasEnd {
		end = start + ReadLines - 1
	}
	pl, err := env.resolve(p)
	if err != nil {
		return errResult(ctxwin.KindRead, "%v", err), nil
	}
	if err := env.allowRead(ctx, NameRead, pl); err != nil {
		return errResult(ctxwin.KindRead, "%v", err), nil
	}

	fi, statErr := os.Stat(pl.Abs)
	if statErr == nil && fi.IsDir() {
		return errResult(ctxwin.KindRead, "%s is a directory, not a file; list its files with glob (path %q, pattern \"*\")", pl.Rel, pl.Rel), nil
	}
	if err := notSpecial(pl); err != nil {
		return errResult(ctxwin.KindRead, "%v", err), nil
	}
	var (
		src  io.Reader
		data []byte
	)
	if statErr == nil && (pl.Temp || fi.Size() > ReadWholeBytes) {
		f, err := openRegular(pl.Abs)
		if err != nil {
			return errResult(ctxwin.KindRead, "cannot read %s: %v", pl.Rel, plainErr(err)), nil
		}
		defer f.Close()
		src = f
	} else {
		// An open editor buffer may exist for a file not yet on disk.
		data, err = env.files().ReadFile(pl.Abs)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return errResult(ctxwin.KindRead, "%s does not exist", pl.Rel), nil
			}
			return errResult(ctxwin.KindRead, "cannot read %s: %v", pl.Rel, plainErr(err)), nil
		}
		src = bytes.NewReader(data)
	}

	r := bufio.NewReaderSize(src, 64<<10)
	if peek, _ := r.Peek(8000); isBinary(peek) {
		size := int64(len(data))
		if statErr == nil {
			size = fi.Size()
		}
		return errResult(ctxwin.KindRead, "%s is a binary file (%s); read shows text files only", pl.Rel, sizeString(size)), nil
	}
	lines, total, err := readRange(r, start, end)
	if err != nil {
		return errResult(ctxwin.KindRead, "cannot read %s: %v", pl.Rel, plainErr(err)), nil
	}
	if total == 0 {
		return ctxwin.Result{Kind: ctxwin.KindRead, Text: pl.Rel + " lines 0-0 of 0\n(empty file)\n", Summary: "Read " + pl.Rel + " lines 0-0 of 0", Path: pl.Rel, Source: data}, nil
	}
	if start > total {
		return errResult(ctxwin.KindRead, "start_line %d is past the end of %s, which has %d lines", start, pl.Rel, total), nil
	}
	last := start + len(lines) - 1
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
	header := fmt.Sprintf("%s lines %d-%d of %d\n", pl.Rel, start, last, total)
	text := header + body.String()
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
		Source:     data,
	}, nil
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
