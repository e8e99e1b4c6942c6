package agent

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// The session log is a JSON Lines file: one record per line, appended and
// synced every round, so a crash loses at most the round in flight. A
// restart replays it and resumes the session as the model last saw it.

// Record kinds.
const (
	recStart = "start" // the session's fixed prefix
	recTurn  = "turn"  // a turn's prompt
	recRound = "round" // a reply with its results, as sent
	recEvent = "event" // a shrink (shed, fold) or a no-window collapse
	recNote  = "note"  // the note written before a fold
	recState = "state" // what the manager learned
	recInfo  = "info"  // an error or a notice in the transcript
)

// record is one line of the log.
type record struct {
	Kind string `json:"t"`

	// start
	Session string            `json:"session,omitempty"`
	Root    string            `json:"root,omitempty"`
	System  string            `json:"system,omitempty"`
	Tools   []ctxwin.ToolSpec `json:"tools,omitempty"`
	Model   string            `json:"model,omitempty"`

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

	// state
	Estimator *ctxwin.Estimator `json:"estimator,omitempty"`
	Reserve   *ctxwin.Reserve   `json:"reserve,omitempty"`
	Progress  *ctxwin.Progress  `json:"progress,omitempty"`
	Window    int               `json:"window,omitempty"`
	Source    string            `json:"source,omitempty"`
}

// sessionLog appends records to a session's file.
type sessionLog struct {
	path string
	f    *os.File
	w    *bufio.Writer
}

func createLog(path string) (*sessionLog, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	return &sessionLog{path: path, f: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

// append buffers a record; sync writes and syncs what is buffered.
func (l *sessionLog) append(r record) error {
	if l == nil {
		return nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = l.w.Write(b)
	return err
}

func (l *sessionLog) sync() error {
	if l == nil {
		return nil
	}
	if err := l.w.Flush(); err != nil {
		return err
	}
	return l.f.Sync()
}

func (l *sessionLog) close() error {
	if l == nil {
		return nil
	}
	err := l.sync()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// readLog reads every complete record of a log. A torn last line (a crash
// mid-write) is dropped.
func readLog(path string) ([]record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []record
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			var rec record
			if jerr := json.Unmarshal(line, &rec); jerr != nil {
				return nil, fmt.Errorf("%s: record %d: %w", path, len(recs)+1, jerr)
			}
			recs = append(recs, rec)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(recs) == 0 || recs[0].Kind != recStart {
		return nil, fmt.Errorf("%s: not a session log", path)
	}
	return recs, nil
}
