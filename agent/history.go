package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reika-lsp/reika-lsp/internal/atomicfile"
)

// Session history (docs/protocol.md §3.9, reika.sessions): the workspace's
// sessions are the logs in its sessions directory, <id>.jsonl. Each can be
// listed, read (its transcript, as reika.transcript rebuilds it), resumed
// (the next ask continues it), renamed and deleted. A session's title is
// its first prompt's first line unless it was renamed: the name the user
// gave is kept in <id>.title beside the log (one line), so that a rename
// needs no lock on a log another process may own, and survives restarts.
// A session's files are its log, <id>.title, <id>.results/ and the pieces
// of its log that a resume set aside (<id>.jsonl.cut-*, .skipped-*).

// SessionInfo is one session of the workspace, as reika.sessions lists it.
type SessionInfo struct {
	ID string `json:"id"`
	// Title is the name the user gave, else the first prompt's first line
	// (at most titleRunes), else "" (a session without a turn).
	Title string `json:"title"`
	// Started and Updated are RFC 3339 times: when the session started,
	// and when its log was last written.
	Started string `json:"started"`
	Updated string `json:"updated"`
	// Turns counts the prompts the session was asked; Bytes is the size
	// of its log.
	Turns int   `json:"turns"`
	Bytes int64 `json:"bytes"`
	// Current is the session the next ask continues.
	Current bool `json:"current"`
	// mod is when the log was last written, to the nanosecond, for the
	// order of the list.
	mod time.Time
}

// ErrUnknownSession says no session of the workspace has the id.
var ErrUnknownSession = errors.New("no such session in this workspace")

const (
	titleSuffix = ".title"
	logSuffix   = ".jsonl"
	// titleRunes bounds a title taken from a prompt; maxTitleRunes one the
	// user gives.
	titleRunes    = 80
	maxTitleRunes = 200
)

// Sessions lists the workspace's sessions, the most recently updated
// first.
func (a *Agent) Sessions() ([]SessionInfo, error) {
	dir := a.sessionsDir()
	paths, err := filepath.Glob(filepath.Join(dir, "*"+logSuffix))
	if err != nil {
		return nil, err
	}
	current := a.sessionID()
	out := []SessionInfo{}
	for _, path := range paths {
		id := strings.TrimSuffix(filepath.Base(path), logSuffix)
		info, err := summarize(dir, id)
		if err != nil {
			a.logf("reika: listing sessions: %v", err)
			continue
		}
		info.Current = id == current
		out = append(out, info)
	}
	slices.SortStableFunc(out, func(x, y SessionInfo) int {
		if c := y.mod.Compare(x.mod); c != 0 {
			return c
		}
		return strings.Compare(y.ID, x.ID)
	})
	return out, nil
}

// summarize reads what the list says of one session from its files. It
// decodes only the few fields it needs of each record.
func summarize(dir, id string) (SessionInfo, error) {
	path := filepath.Join(dir, id+logSuffix)
	f, err := os.Open(path)
	if err != nil {
		return SessionInfo{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return SessionInfo{}, err
	}
	info := SessionInfo{ID: id, Bytes: fi.Size(), Updated: fi.ModTime().UTC().Format(time.RFC3339), mod: fi.ModTime()}
	var first string
	br := bufio.NewReaderSize(f, 1<<16)
	for n := 0; ; n++ {
		line, rerr := br.ReadBytes('\n')
		var r struct {
			Kind    string `json:"t"`
			Started string `json:"started"`
			Prompt  string `json:"prompt"`
		}
		if json.Unmarshal(line, &r) == nil {
			switch {
			case n == 0 && r.Kind != recStart:
				return SessionInfo{}, fmt.Errorf("%s: not a session log", path)
			case r.Kind == recStart:
				info.Started = r.Started
			case r.Kind == recTurn:
				if info.Turns == 0 {
					first = r.Prompt
				}
				info.Turns++
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return SessionInfo{}, rerr
		}
	}
	if info.Started == "" {
		info.Started = startedFromID(id, fi.ModTime())
	}
	info.Title = promptTitle(first)
	if t, err := os.ReadFile(filepath.Join(dir, id+titleSuffix)); err == nil && strings.TrimSpace(string(t)) != "" {
		info.Title = strings.TrimSpace(string(t))
	}
	return info, nil
}

// startedFromID is when a session whose start record has no time (a log
// written before it had one) started: the time its id begins with (see
// newSessionID), else its log's time.
func startedFromID(id string, mod time.Time) string {
	if len(id) >= 15 {
		if t, err := time.Parse("20060102-150405", id[:15]); err == nil {
			return t.UTC().Format(time.RFC3339)
		}
	}
	return mod.UTC().Format(time.RFC3339)
}

// promptTitle is a title from a prompt: its first line that is not blank,
// at most titleRunes long.
func promptTitle(prompt string) string {
	for _, line := range strings.Split(prompt, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return clip(line, titleRunes)
		}
	}
	return ""
}

// clip cuts s to n runes, ending it with "…" when it cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// sessionLogPath is the log of session id, ErrUnknownSession when there
// is none (an id that could name a file elsewhere names none).
func (a *Agent) sessionLogPath(id string) (string, error) {
	if id == "" || strings.ContainsAny(id, `/\`) || strings.HasPrefix(id, ".") {
		return "", fmt.Errorf("session %q: %w", id, ErrUnknownSession)
	}
	path := filepath.Join(a.sessionsDir(), id+logSuffix)
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("session %q: %w", id, ErrUnknownSession)
	}
	return path, nil
}

// OpenSession is the transcript of session id, rebuilt from its log as
// Transcript rebuilds the current one's; nothing changes.
func (a *Agent) OpenSession(id string, maxChars int) (TranscriptPage, error) {
	path, err := a.sessionLogPath(id)
	if err != nil {
		return TranscriptPage{Events: []Event{}}, err
	}
	size := int64(-1)
	a.mu.Lock()
	sess := a.sess
	a.mu.Unlock()
	if sess != nil && sess.id == id {
		if size, err = sess.log.synced(); err != nil {
			return TranscriptPage{Events: []Event{}}, err
		}
	}
	return transcriptPage(path, size, maxChars)
}

// ResumeSession makes session id the one the next ask continues, as a
// restart resumes the last one: its log is replayed and it becomes the
// workspace's last session. Refused while a turn runs, and when another
// process owns the session.
func (a *Agent) ResumeSession(id string) error {
	if _, err := a.sessionLogPath(id); err != nil {
		return err
	}
	_, end, err := a.begin(context.Background())
	if err != nil {
		return err
	}
	defer end()
	a.mu.Lock()
	old := a.sess
	a.mu.Unlock()
	if old != nil && old.id == id {
		return nil
	}
	sess, note, err := a.resumeSessionID(a.knownInfo(), id)
	switch {
	case errors.Is(err, errNoSession):
		return fmt.Errorf("session %q: %w", id, ErrUnknownSession)
	case errors.Is(err, errLogBusy):
		return fmt.Errorf("session %q is open in another reika-lsp (another editor window, or reika-lsp run)", id)
	case err != nil:
		return fmt.Errorf("session %q: %w", id, err)
	}
	if err := sess.markLast(); err != nil {
		sess.log.close()
		return fmt.Errorf("session %q: %w", id, err)
	}
	a.mu.Lock()
	a.setSessionLocked(sess)
	if a.set.Mode == "" {
		// The resumed session's mode, as at a restart.
		a.mode = ""
		if sess.offer.mode != ModeCode {
			a.mode = sess.offer.mode
		}
	}
	a.mu.Unlock()
	a.endSession(old)
	a.appr.reset()
	if note != "" {
		a.logf("reika: %s", note)
		a.notice("", LevelWarning, note)
	}
	a.publishStatusBusy(sess, false)
	return nil
}

// endSession ends a session the agent no longer runs: its background
// commands stop and its log is closed.
func (a *Agent) endSession(sess *session) {
	if sess == nil {
		return
	}
	sess.endJobs(a.logf)
	if err := sess.log.close(); err != nil {
		a.logf("reika: closing the session log: %v", err)
	}
}

// RenameSession names session id; an empty title gives it back the one
// from its first prompt.
func (a *Agent) RenameSession(id, title string) error {
	if _, err := a.sessionLogPath(id); err != nil {
		return err
	}
	title = clip(strings.Join(strings.Fields(title), " "), maxTitleRunes)
	path := filepath.Join(a.sessionsDir(), id+titleSuffix)
	if title == "" {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	return atomicfile.Write(path, []byte(title+"\n"))
}

// DeleteSession deletes session id: its log, title, saved results and
// set-aside pieces. Deleting the current session ends it (the next ask
// starts a new one), refused while its turn runs; a session another
// process owns is refused.
func (a *Agent) DeleteSession(id string) error {
	path, err := a.sessionLogPath(id)
	if err != nil {
		return err
	}
	if a.sessionID() == id {
		_, end, err := a.begin(context.Background())
		if err != nil {
			return err
		}
		defer end()
		a.mu.Lock()
		sess := a.sess
		if sess != nil && sess.id == id {
			// The status of no session: the chip before a first turn.
			a.setSessionLocked(nil)
			a.told.status = initialStatus(a.set, a.opts.Workspace.Root())
		}
		a.mu.Unlock()
		if sess != nil && sess.id == id {
			a.endSession(sess)
			err := removeSession(a.sessionsDir(), id)
			a.appr.reset()
			a.publishStatusBusy(nil, false)
			return err
		}
	}
	l, err := openLog(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("session %q: %w", id, ErrUnknownSession)
	case errors.Is(err, errLogBusy):
		return fmt.Errorf("session %q is open in another reika-lsp (another editor window, or reika-lsp run)", id)
	case err != nil:
		return err
	}
	defer l.close()
	return removeSession(a.sessionsDir(), id)
}

// removeSession removes session id's files, its log first (a results
// directory without its log is pruned by the next session anyway), and
// forgets it as the last session.
func removeSession(dir, id string) error {
	base := filepath.Join(dir, id)
	if err := os.Remove(base + logSuffix); err != nil {
		return err
	}
	var errs []error
	pieces, _ := filepath.Glob(base + logSuffix + ".*")
	for _, p := range append(pieces, base+titleSuffix) {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	errs = append(errs, os.RemoveAll(base+resultsSuffix))
	last := filepath.Join(dir, "last")
	if b, err := os.ReadFile(last); err == nil && strings.TrimSpace(string(b)) == id {
		if err := os.Remove(last); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
