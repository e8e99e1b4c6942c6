package tools

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// Limits of long results (bash, grep, glob, fetch_url).
//
// A result longer than SaveBytes or SaveLines is saved whole to a file
// under Env.TempDir (Result.SavedTo), so the model can page through it with
// read. Its Text keeps at most TextHead bytes of the start and TextTail of
// the end, cut at line boundaries, with a marker between them naming the
// omitted lines and the file. The agent may cut Text further to fit the
// window; the file is always whole.
const (
	SaveBytes = 16 << 10
	SaveLines = 500
	// GlobSaveBytes is glob's SaveBytes: a list of paths longer than this
	// may be cut to fit the window (ctxwin.SmallResult tokens are never
	// cut; a path is seldom under 2 bytes a token), and a cut list is
	// paged through its file.
	GlobSaveBytes = ctxwin.SmallResult * 2
	TextHead      = 128 << 10
	TextTail      = 128 << 10
)

// output collects a long result with bounded memory: the first TextHead
// bytes, a ring of the last TextTail bytes, and, once the result is long
// enough to be saved, everything streamed to a temp file. It is an
// io.Writer; it never fails a write (a temp file error is reported in the
// text instead).
type output struct {
	dir    string // where the temp file goes; "" means not saved
	prefix string // temp file name prefix, e.g. "bash"
	// saveBytes is the size past which the output is saved: SaveBytes
	// unless the tool lowers it (never above SaveBytes).
	saveBytes int64

	head  []byte
	tail  ring
	total int64
	nl    int64 // newlines seen
	last  byte  // the last byte written

	file    *os.File
	buf     *bufio.Writer // over file and sum
	sum     hash.Hash     // of what file holds: it names the file at finish
	saveErr error
}

func newOutput(env *Env, prefix string) *output {
	return &output{dir: env.TempDir, prefix: prefix, saveBytes: SaveBytes, head: make([]byte, 0, 4096), tail: ring{size: TextTail}}
}

// Write implements io.Writer.
func (o *output) Write(p []byte) (int, error) {
	n0 := len(p)
	if n0 == 0 {
		return 0, nil
	}
	prev := o.total
	o.total += int64(len(p))
	o.nl += int64(bytes.Count(p, []byte{'\n'}))
	o.last = p[len(p)-1]
	if o.file == nil && o.saveErr == nil && (o.total > o.saveBytes || o.nl > SaveLines) {
		// Everything so far fits in head (prev ≤ saveBytes ≤ SaveBytes < TextHead).
		o.startFile(prev)
	}
	if o.file != nil {
		if _, err := o.buf.Write(p); err != nil {
			o.dropFile(err)
		}
	}
	if room := TextHead - len(o.head); room > 0 {
		n := min(room, len(p))
		o.head = append(o.head, p[:n]...)
		p = p[n:]
	}
	o.tail.write(p)
	return n0, nil
}

func (o *output) startFile(prev int64) {
	if o.dir == "" {
		o.saveErr = fmt.Errorf("no temp directory is configured")
		return
	}
	if err := os.MkdirAll(o.dir, 0o700); err != nil {
		o.saveErr = err
		return
	}
	f, err := os.CreateTemp(o.dir, "."+o.prefix+"-*.part")
	if err != nil {
		o.saveErr = err
		return
	}
	o.sum = sha256.New()
	o.file, o.buf = f, bufio.NewWriterSize(io.MultiWriter(f, o.sum), 64<<10)
	if _, err := o.buf.Write(o.head[:prev]); err != nil {
		o.dropFile(err)
	}
}

// dropFile gives up the temp file after err.
func (o *output) dropFile(err error) {
	o.saveErr = err
	o.file.Close()
	os.Remove(o.file.Name())
	o.file, o.buf, o.sum = nil, nil, nil
}

// WriteString implements io.StringWriter.
func (o *output) WriteString(s string) (int, error) { return o.Write([]byte(s)) }

// lines is the number of lines written (a last line without a newline counts).
func (o *output) lines() int64 {
	if o.total > 0 && o.last != '\n' {
		return o.nl + 1
	}
	return o.nl
}

// finish closes the temp file and returns the text for the model and the
// file holding the whole output ("" when it was short enough, or could not
// be saved).
func (o *output) finish() (text, savedTo string) {
	if o.file != nil {
		err := o.buf.Flush()
		if cerr := o.file.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			savedTo, err = o.name()
		}
		if err != nil {
			o.saveErr = err
			os.Remove(o.file.Name())
		}
		o.file, o.buf, o.sum = nil, nil, nil
	}
	tail := o.tail.bytes()
	if o.total <= TextHead+TextTail {
		return string(o.head) + string(tail), savedTo
	}
	head := o.head
	if i := bytes.LastIndexByte(head, '\n'); i >= len(head)/2 {
		head = head[:i+1]
	} else {
		head = trimPartialRune(head)
	}
	if i := bytes.IndexByte(tail, '\n'); i >= 0 && i < len(tail)/2 {
		tail = tail[i+1:]
	} else {
		tail = skipContinuation(tail)
	}
	total := o.lines()
	headLines := int64(bytes.Count(head, []byte{'\n'}))
	tailLines := int64(bytes.Count(tail, []byte{'\n'}))
	if len(tail) > 0 && tail[len(tail)-1] != '\n' {
		tailLines++
	}
	omitted := o.total - int64(len(head)) - int64(len(tail))
	var m strings.Builder
	if len(head) > 0 && head[len(head)-1] != '\n' {
		m.WriteByte('\n')
	}
	fmt.Fprintf(&m, "[… %s omitted", sizeString(omitted))
	if first, last := headLines+1, total-tailLines; first <= last && len(head) > 0 && head[len(head)-1] == '\n' {
		fmt.Fprintf(&m, ": lines %d-%d of %d", first, last, total)
	}
	switch {
	case savedTo != "":
		fmt.Fprintf(&m, ". The whole output (%s, %d lines) is saved in %s: page through it with read (start_line, end_line) or search it with grep.]\n", sizeString(o.total), total, savedTo)
	case o.saveErr != nil:
		fmt.Fprintf(&m, ". The whole output (%s, %d lines) could not be saved: %v.]\n", sizeString(o.total), total, o.saveErr)
	default:
		fmt.Fprintf(&m, ".]\n")
	}
	return string(head) + m.String() + string(tail), savedTo
}

// name gives the closed temp file its final name, after its content: the
// same output is saved once, and the path the model reads is the same
// whatever ran before it (a random name varies in length, and with it the
// tokens of every later request; the bench's runs must be identical).
func (o *output) name() (string, error) {
	path := filepath.Join(o.dir, o.prefix+"-"+hex.EncodeToString(o.sum.Sum(nil)[:6])+".txt")
	if err := os.Rename(o.file.Name(), path); err != nil {
		return "", err
	}
	return path, nil
}

// discard closes and removes the temp file, for a result that is dropped.
func (o *output) discard() {
	if o.file != nil {
		o.file.Close()
		os.Remove(o.file.Name())
		o.file, o.buf, o.sum = nil, nil, nil
	}
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// skipContinuation drops UTF-8 continuation bytes at the start of b.
func skipContinuation(b []byte) []byte {
	for i := 0; i < len(b) && i < utf8.UTFMax; i++ {
		if utf8.RuneStart(b[i]) {
			return b[i:]
		}
	}
	return b
}

// ring keeps the last size bytes written; its buffer is allocated on the
// first write.
type ring struct {
	size int
	buf  []byte
	pos  int // next write position
	full bool
}

func (r *ring) write(p []byte) {
	if len(p) == 0 {
		return
	}
	if r.buf == nil {
		r.buf = make([]byte, r.size)
	}
	if len(p) >= len(r.buf) {
		copy(r.buf, p[len(p)-len(r.buf):])
		r.pos, r.full = 0, true
		return
	}
	n := copy(r.buf[r.pos:], p)
	if n < len(p) {
		copy(r.buf, p[n:])
		r.full = true
	}
	r.pos = (r.pos + len(p)) % len(r.buf)
	if r.pos == 0 {
		r.full = true
	}
}

func (r *ring) bytes() []byte {
	if !r.full {
		return append([]byte(nil), r.buf[:r.pos]...) // nil buf: pos is 0
	}
	out := make([]byte, 0, len(r.buf))
	out = append(out, r.buf[r.pos:]...)
	return append(out, r.buf[:r.pos]...)
}

// sizeString prints a byte count for people: 512 B, 12 KB, 3.4 MB.
func sizeString(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 10_000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	case n < 1_000_000:
		return fmt.Sprintf("%d KB", n/1000)
	case n < 10_000_000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%d MB", n/1_000_000)
}
