package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// Framing limits.
const (
	// maxBody caps the Content-Length a frame may declare. The body buffer
	// grows as bytes arrive, so a large declaration costs nothing until the
	// client sends the bytes.
	maxBody = 256 << 20
	// maxHeaderLine is how much of one header line is kept; the rest of a
	// longer line (junk) is skipped, keeping only its tail so that a header
	// glued to the end of junk is still found.
	maxHeaderLine = 4 << 10
	// maxLoggedBadFrames bounds the log lines a flood of garbage can cause.
	maxLoggedBadFrames = 20
)

// stream is the server's framing: LSP base-protocol headers (Content-Length)
// over a byte stream, like jsonrpc2.NewHeaderStream, except that it survives
// what a client should never send. jsonrpc2's own framer ends the connection
// on a malformed header, a body that is not JSON or one that is not a
// JSON-RPC message; this one logs it, answers what can be answered (a parse
// or invalid-request error, with the request's id when it can be read) and
// reads on. A bad header is skipped up to the next line holding a
// Content-Length. Batches (JSON arrays) are refused: LSP does not use them.
//
// It implements jsonrpc2.Stream plus ReadFrame and WriteFrame, which the
// conn uses when a stream has them. Writes never look at the context: a
// reply or notification is never dropped because a context was cancelled.
type stream struct {
	rwc  io.ReadWriteCloser
	in   *bufio.Reader
	logf func(format string, args ...any)
	body bytes.Buffer // guarded by the read loop (one reader at a time)
	bad  int          // malformed frames seen; read loop only

	wmu  sync.Mutex
	wbuf []byte // guarded by wmu

	failOnce   sync.Once
	readFailed chan struct{} // closed when reading has stopped for good
}

func newStream(rwc io.ReadWriteCloser, logf func(string, ...any)) *stream {
	return &stream{
		rwc:        rwc,
		in:         bufio.NewReaderSize(rwc, 64<<10),
		logf:       logf,
		readFailed: make(chan struct{}),
	}
}

// ReadFrame returns the body of the next well-formed JSON-RPC message. The
// slice is valid until the next call.
func (s *stream) ReadFrame(context.Context) ([]byte, int64, error) {
	for {
		body, err := s.readBody()
		if err != nil {
			s.failOnce.Do(func() { close(s.readFailed) })
			return nil, 0, err
		}
		if s.accept(body) {
			return body, int64(len(body)), nil
		}
	}
}

// Read implements jsonrpc2.Stream for callers that do not use ReadFrame.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	body, n, err := s.ReadFrame(ctx)
	if err != nil {
		return nil, 0, err
	}
	msg, err := jsonrpc2.DecodeMessage(body)
	if err != nil {
		return nil, 0, err // cannot happen: accept decoded it already
	}
	return msg, n, nil
}

// Write implements jsonrpc2.Stream.
func (s *stream) Write(_ context.Context, msg jsonrpc2.Message) (int64, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.wbuf = jsonrpc2.AppendMessage(s.wbuf[:0], msg)
	return s.writeLocked(s.wbuf)
}

// WriteFrame writes an already encoded message.
func (s *stream) WriteFrame(_ context.Context, data []byte) (int64, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.writeLocked(data)
}

// writeLocked frames body and writes header and body with one Write, so
// frames from concurrent writers never interleave.
func (s *stream) writeLocked(body []byte) (int64, error) {
	frame := make([]byte, 0, len(body)+32)
	frame = append(frame, "Content-Length: "...)
	frame = strconv.AppendInt(frame, int64(len(body)), 10)
	frame = append(frame, "\r\n\r\n"...)
	frame = append(frame, body...)
	n, err := s.rwc.Write(frame)
	return int64(n), err
}

// Close closes the underlying connection.
func (s *stream) Close() error { return s.rwc.Close() }

// readBody reads one header block and its body. Header blocks without a
// usable Content-Length are skipped, as is anything before a line that
// holds one.
func (s *stream) readBody() ([]byte, error) {
	length := -1 // the block's Content-Length; -1 when none is usable
	lines := 0   // lines in the block so far
	for {
		line, err := s.readLine()
		if err != nil {
			if err == io.EOF && lines > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if isBlank(line) {
			if length > 0 {
				break
			}
			if lines > 0 {
				s.badFrame("header without a usable Content-Length skipped")
			}
			length, lines = -1, 0
			continue
		}
		lines++
		if n, ok, found := contentLength(line); found {
			length = -1
			if ok {
				length = n
			}
		}
	}
	if s.body.Cap() > 4<<20 {
		s.body = bytes.Buffer{} // let a one-off huge frame's buffer go
	}
	s.body.Reset()
	if _, err := io.CopyN(&s.body, s.in, int64(length)); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return s.body.Bytes(), nil
}

// readLine reads one line, ending in '\n' (or at EOF), keeping at most its
// last maxHeaderLine bytes.
func (s *stream) readLine() ([]byte, error) {
	var kept []byte
	for {
		chunk, err := s.in.ReadSlice('\n')
		if len(kept)+len(chunk) > maxHeaderLine {
			kept = append(kept, chunk...)
			kept = append(kept[:0], kept[len(kept)-maxHeaderLine:]...)
		} else {
			kept = append(kept, chunk...)
		}
		switch {
		case err == nil:
			return kept, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(kept) > 0:
			return kept, nil
		default:
			return nil, err
		}
	}
}

func isBlank(line []byte) bool {
	return len(bytes.TrimRight(line, "\r\n")) == 0
}

// contentLength finds the last "Content-Length:" in line (any case; it may
// follow junk on the same line) and parses its value. found reports whether
// the field is there; ok whether its value is a usable length.
func contentLength(line []byte) (n int, ok, found bool) {
	const name = "content-length:"
	i := lastIndexFold(line, name)
	if i < 0 {
		return 0, false, false
	}
	v := bytes.TrimSpace(line[i+len(name):])
	n, err := strconv.Atoi(string(v))
	if err != nil || n <= 0 || n > maxBody {
		return 0, false, true
	}
	return n, true, true
}

// lastIndexFold is bytes.LastIndex with ASCII case folding; sub must be
// lower case.
func lastIndexFold(s []byte, sub string) int {
	for i := len(s) - len(sub); i >= 0; i-- {
		match := true
		for j := 0; j < len(sub); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != sub[j] {
				match = false
				break
			}
		}
		if match {
			return i
		}
	}
	return -1
}

// accept reports whether body is a message the conn can take. Otherwise it
// answers a malformed request with an error (and drops a malformed
// response: answering a response would confuse the client further).
func (s *stream) accept(body []byte) bool {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		s.badFrame("batch refused")
		s.replyError(jsonrpc2.ID{}, invalidRequest("batch requests are not supported (LSP does not use them)"))
		return false
	}
	if _, err := jsonrpc2.DecodeMessage(body); err == nil {
		return true
	}
	if !json.Valid(body) {
		s.badFrame("body is not JSON")
		s.replyError(jsonrpc2.ID{}, parseError("parse error: the message body is not valid JSON"))
		return false
	}
	if trimmed[0] != '{' {
		s.badFrame("body is not a JSON object")
		s.replyError(jsonrpc2.ID{}, invalidRequest("invalid request: the message is not a JSON object"))
		return false
	}
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Method == nil {
		s.badFrame("malformed message without a method dropped")
		return false
	}
	s.badFrame("invalid request")
	s.replyError(requestID(env.ID), invalidRequest("invalid request: want a JSON-RPC 2.0 request with a string method and an integer or string id"))
	return false
}

// requestID returns the id of a malformed request when it is a usable one,
// else the null id.
func requestID(raw json.RawMessage) jsonrpc2.ID {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return jsonrpc2.NewStringID(s)
	}
	if n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64); err == nil {
		return jsonrpc2.NewNumberID(n)
	}
	return jsonrpc2.ID{}
}

func (s *stream) replyError(id jsonrpc2.ID, e *jsonrpc2.Error) {
	if _, err := s.Write(context.Background(), jsonrpc2.NewResponse(id, nil, e)); err != nil {
		s.logf("lsp: answering a malformed message: %v", err)
	}
}

func (s *stream) badFrame(what string) {
	s.bad++
	switch {
	case s.bad < maxLoggedBadFrames:
		s.logf("lsp: malformed frame from the client: %s", what)
	case s.bad == maxLoggedBadFrames:
		s.logf("lsp: malformed frame from the client: %s (further malformed frames are not logged)", what)
	}
}

var _ jsonrpc2.Stream = (*stream)(nil)
