package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// The session log is a JSON Lines file: one record per line, written and
// synced every round, so a crash loses at most the round in flight. A
// restart replays it and resumes the session as the model last saw it.
//
// The log is never left to grow past a broken record. Opening one for a
// resume cuts a torn or garbage tail (a crash mid-write, a full disk) back
// to the last whole record before anything is appended, keeping the cut
// bytes in a file beside it; a write that fails is taken back the same way
// and retried at the next sync. A line that is not a record in the middle
// of the log costs that line alone: it is skipped, copied beside the log
// and blanked in it, and the records after it are read. One process owns a log at a time: it holds
// an exclusive flock on it while it is open.

// Record kinds.
const (
	recStart = "start" // the session's fixed prefix
	recTurn  = "turn"  // a turn's prompt
	recRound = "round" // a reply with its results, as sent
	recEvent = "event" // a shrink (shed, fold) or a no-window collapse
	recNote  = "note"  // the note written before a fold
	recState = "state" // what the manager learned
	recInfo  = "info"  // an error or a notice in the transcript
	// recPrefix is a new fixed prefix (System, Tools) from a mode switch.
	recPrefix = "prefix"
	recTools  = "tools" // the tool definitions changed (an MCP server's)
)

// record is one line of the log: the fields of every kind in one JSON
// object (each kind uses a few of them), hence more than fifteen.
type record struct {
	Kind string `json:"t"`

	// start
	Session string            `json:"session,omitempty"`
	Root    string            `json:"root,omitempty"`
	System  string            `json:"system,omitempty"`
	Tools   []ctxwin.ToolSpec `json:"tools,omitempty"`
	Model   string            `json:"model,omitempty"`
	// start, prefix: the session's mode ("" is code)
	Mode string `json:"mode,omitempty"`
	// start: when the session started (RFC 3339; older logs have none)
	Started string `json:"started,omitempty"`

	// turn
	Turn   int    `json:"turn,omitempty"`
	Prompt string `json:"prompt,omitempty"`

	// round
	Reply   *ctxwin.Message  `json:"reply,omitempty"`
	Results []*ctxwin.Result `json:"results,omitempty"`

	// event
	Event *ctxwin.Event `json:"event,omitempty"`

	// note, info
	Text string `json:"text,omitempty"`
	// info: the reply text a cancel cut off mid-stream, as the transcript
	// showed it (never part of the model's history; a reader that does not
	// know the field sees an empty info line)
	Cut string `json:"cut,omitempty"`

	// state: what the manager learned (its fields, estimator, reserve,
	// progress and window, are the record's own; start has the window),
	// and where the window came from
	ctxwin.State
	Source string       `json:"source,omitempty"`
	Tally  *PromptTally `json:"tally,omitempty"`
}

// errLogBusy says another process owns the session log.
var errLogBusy = errors.New("the session log is in use by another reika-lsp process")

// sessionLog appends records to a session's file. It is safe for
// concurrent use: the turn appends and syncs while Save reads.
type sessionLog struct {
	path string

	mu   sync.Mutex
	f    *os.File // read-write, flocked while open; guarded by mu
	size int64    // bytes of whole, synced records; guarded by mu
	buf  []byte   // records appended since the last sync; guarded by mu
	err  error    // why the last sync failed, until one succeeds; guarded by mu
	// fault, when set (tests), is asked before each write; an error makes
	// the write stop halfway through, as a full disk does. Guarded by mu.
	fault func(off int64, n int) error
}

// createLog creates and locks a new session log.
func createLog(path string) (*sessionLog, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, err
	}
	return &sessionLog{path: path, f: f}, nil
}

// openLog opens and locks an existing session log for appending. It
// returns errLogBusy when another process holds it. The caller reads the
// records with readRecords and cuts a broken tail with cut before it
// appends anything.
func openLog(path string) (*sessionLog, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &sessionLog{path: path, f: f, size: fi.Size()}, nil
}

// append buffers a record for the next sync.
func (l *sessionLog) append(r record) error {
	if l == nil {
		return nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("session log: %w", err)
	}
	l.mu.Lock()
	l.buf = append(append(l.buf, b...), '\n')
	l.mu.Unlock()
	return nil
}

// sync writes what is buffered and syncs it to disk. A write that fails is
// taken back (the file is cut to its last whole record) and kept in the
// buffer, so a later sync writes it again; the error says why.
func (l *sessionLog) sync() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.syncLocked()
}

func (l *sessionLog) syncLocked() error {
	if l.f == nil {
		return errors.New("session log: closed")
	}
	if len(l.buf) == 0 {
		return l.err
	}
	err := l.write(l.buf)
	if err == nil {
		err = l.f.Sync()
	}
	if err != nil {
		// Take the half-written records back; the next open would cut
		// them anyway.
		l.f.Truncate(l.size)
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is in the message already
		}
		l.err = fmt.Errorf("writing the session log %s: %w", l.path, err)
		return l.err
	}
	l.size += int64(len(l.buf))
	if cap(l.buf) > 1<<20 {
		l.buf = nil
	} else {
		l.buf = l.buf[:0]
	}
	l.err = nil
	return nil
}

func (l *sessionLog) write(b []byte) error {
	if l.fault != nil {
		if err := l.fault(l.size, len(b)); err != nil {
			l.f.WriteAt(b[:len(b)/2], l.size)
			return err
		}
	}
	_, err := l.f.WriteAt(b, l.size)
	return err
}

// synced syncs and returns the size of the log's whole records, for a
// reader of the file: bytes past it may be a write in progress.
func (l *sessionLog) synced() (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.syncLocked()
	return l.size, err
}

// close syncs, releases the lock and closes the file.
func (l *sessionLog) close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.syncLocked()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

// cut cuts the log back to off, the end of its last good record, keeping
// the bytes cut in a file beside it (returned; "" when nothing was cut). A
// last record without its newline gets one.
func (l *sessionLog) cut(off int64) (kept string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if off < l.size {
		tail := make([]byte, l.size-off)
		if _, err := l.f.ReadAt(tail, off); err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("reading the tail of %s: %w", l.path, err)
		}
		kept = fmt.Sprintf("%s.cut-%s", l.path, time.Now().UTC().Format("20060102-150405.000000000"))
		if err := writeSynced(kept, tail); err != nil {
			return "", fmt.Errorf("keeping the tail of %s: %w", l.path, err)
		}
		if err := l.f.Truncate(off); err != nil {
			return kept, fmt.Errorf("cutting %s: %w", l.path, err)
		}
		l.size = off
	}
	if l.size > 0 {
		last := make([]byte, 1)
		if _, err := l.f.ReadAt(last, l.size-1); err != nil {
			return kept, fmt.Errorf("reading %s: %w", l.path, err)
		}
		if last[0] != '\n' {
			if _, err := l.f.WriteAt([]byte{'\n'}, l.size); err != nil {
				return kept, fmt.Errorf("ending the last record of %s: %w", l.path, err)
			}
			l.size++
		}
	}
	return kept, l.f.Sync()
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// badRecord is where a log stops being readable.
type badRecord struct {
	N   int   // 1-based number of the record
	Off int64 // byte offset where it starts
	Err error
}

func (b *badRecord) Error() string {
	return fmt.Sprintf("record %d (byte %d): %v", b.N, b.Off, b.Err)
}

// skippedLine is a line in the middle of a log that is not a record
// (garbage): the records after it are read, and it is skipped.
type skippedLine struct {
	Line int   // 1-based line number
	Off  int64 // byte offset where it starts
	Len  int   // bytes, with its newline
	Err  error
}

// readRecords reads the whole records of the first size bytes of r. ends[i]
// is the offset just past record i. A line that is not a whole JSON record
// (a torn write, garbage) is skipped when a record follows it (skipped);
// the lines after the last record that are not records are a broken tail,
// and bad says where it starts. A last record whose newline is missing is
// whole when its JSON is. Blank lines (skipped lines blanked by
// blankSkipped) are nothing.
func readRecords(r io.ReaderAt, size int64) (recs []record, ends []int64, skipped []skippedLine, bad *badRecord, err error) {
	br := bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 1<<20)
	var off int64
	var pending []skippedLine // bad lines not yet followed by a record
	for n := 1; ; n++ {
		line, rerr := br.ReadBytes('\n')
		if body := bytes.TrimRight(line, "\r\n"); len(line) > 0 && len(bytes.TrimSpace(body)) > 0 {
			var rec record
			if jerr := json.Unmarshal(body, &rec); jerr != nil || rec.Kind == "" {
				if jerr == nil {
					jerr = errors.New("no record kind")
				}
				if line[len(line)-1] != '\n' {
					jerr = fmt.Errorf("a partial record (the log ends mid-write): %w", jerr)
				}
				pending = append(pending, skippedLine{Line: n, Off: off, Len: len(line), Err: jerr})
			} else {
				skipped = append(skipped, pending...)
				pending = nil
				recs = append(recs, rec)
				ends = append(ends, off+int64(len(line)))
			}
		}
		off += int64(len(line))
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return recs, ends, skipped, nil, rerr
		}
	}
	if len(pending) > 0 {
		bad = &badRecord{N: len(recs) + 1, Off: pending[0].Off, Err: pending[0].Err}
	}
	return recs, ends, skipped, bad, nil
}

// setAside copies the skipped lines of the log to a file beside it (whose
// path it returns) and blanks them in the log (spaces, the newline kept),
// so that the log reads the same without them and a later resume does not
// meet them again.
func (l *sessionLog) setAside(skipped []skippedLine) (kept string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var all []byte
	for _, s := range skipped {
		b := make([]byte, s.Len)
		if _, err := l.f.ReadAt(b, s.Off); err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("reading %s: %w", l.path, err)
		}
		all = append(all, b...)
	}
	kept = fmt.Sprintf("%s.skipped-%s", l.path, time.Now().UTC().Format("20060102-150405.000000000"))
	if err := writeSynced(kept, all); err != nil {
		return "", fmt.Errorf("keeping the skipped lines of %s: %w", l.path, err)
	}
	for _, s := range skipped {
		blank := bytes.Repeat([]byte{' '}, s.Len-1)
		if _, err := l.f.WriteAt(blank, s.Off); err != nil {
			return kept, fmt.Errorf("blanking a skipped line of %s: %w", l.path, err)
		}
	}
	return kept, l.f.Sync()
}

// readLog reads every whole record of a log file up to size bytes (-1: the
// whole file), for a reader that does not own it. Lines that are not
// records are left out.
func readLog(path string, size int64) ([]record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size < 0 {
		fi, err := f.Stat()
		if err != nil {
			return nil, err
		}
		size = fi.Size()
	}
	recs, _, _, _, err := readRecords(f, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 || recs[0].Kind != recStart {
		return nil, fmt.Errorf("%s: not a session log", path)
	}
	return recs, nil
}

// logError is a session log that cannot be written: the turn stops.
type logError struct{ err error }

func (e *logError) Error() string {
	return fmt.Sprintf("%v; the turn was stopped so that nothing runs unrecorded (free some space, or fix the state directory, and ask again)", e.err)
}

func (e *logError) Unwrap() error { return e.err }

// logStopped is the error that stops a turn whose log write failed.
func logStopped(err error) error {
	var l *logError
	if errors.As(err, &l) {
		return err
	}
	return &logError{err: err}
}
