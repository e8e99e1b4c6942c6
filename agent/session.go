package agent

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/agent/tools"
	"github.com/reika-lsp/reika-lsp/ctxwin"
	"github.com/reika-lsp/reika-lsp/internal/atomicfile"
)

// session is one conversation: its history as the model sees it, its log,
// and what the agent learned. The log is safe for concurrent use (Save
// reads it during a turn); everything else belongs to whoever holds the
// agent's run claim (the running turn, compact or new session) and, while
// none is held, to the holder of Agent.mu.
//
// Its sixteen fields fall in four groups, too unlike to share a struct:
// where it lives (id, root, dir, results), what it owns (jobs, m, log,
// tally, out), what it knows of the model and its changes (info,
// outdated, changes), and what it remembers (trail, shrunkAt, subagent,
// offer).
type session struct {
	id   string
	root string
	dir  string // the workspace's sessions directory
	// results, when set, is where the session's tools save long results
	// (resultsDir says where by default).
	results string
	// jobs are the session's background commands (nil for a subagent's),
	// stopped when the session ends (endJobs).
	jobs *tools.Jobs
	// m owns the session's window (setWindow); info is what the engine
	// said of the model but for the window (its Window is always 0, see
	// modelInfo), with where the window came from.
	m    *ctxwin.Manager
	log  *sessionLog
	info llm.ModelInfo
	// outdated says the agent's settings or model info changed since the
	// manager took them (see changes.go). Guarded by Agent.mu.
	outdated bool
	// changes are what applyChanges changed, for the next round's
	// transcript.
	changes []string
	// trail is what the session remembers of its last requests.
	trail requestTrail
	// shrunkAt is the round of the last shed or fold, for the status.
	shrunkAt int
	// tally counts the prompt tokens processed and reused; a subagent's
	// session shares its parent's.
	tally *PromptTally
	// out receives the session's transcript and notices (recorder.go).
	out sink
	// subagent says this is a subagent's session: it emits no transcript,
	// keeps no log, and sends its requests as a subagent's
	// (Request.Subagent).
	subagent bool
	// offer is what the session gives the model besides its history.
	offer sessionOffer
}

// sessionOffer is what a session gives the model besides its history:
// its mode, the tools it offers (the mode's), the skills found when it
// started, the directories whose instructions it was given (modes.go,
// skills.go, instructions.go), and its fixed prefix part by part.
type sessionOffer struct {
	mode   string
	tools  []tools.Tool
	skills skillSet
	nested map[string]bool
	// split is the fixed prefix part by part, for the status tooltip; nil
	// for a resumed session (its log holds the prefix whole).
	split []PrefixPart
}

// requestTrail is what a session remembers of its last requests, for the
// debug line (debugline.go) and the chunk-reuse check (chunkreuse.go).
type requestTrail struct {
	// prev is the last request sent; prevPrompt the prompt tokens the
	// engine counted for it (0: unknown).
	prev       []ctxwin.Message
	prevPrompt int
	// reuseMisses counts the deletion-shaped requests in a row that
	// reused nothing beyond the common prefix.
	reuseMisses int
}

// StateDir is the default state directory: $XDG_STATE_HOME/reika.
func StateDir() string {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return filepath.Join(os.TempDir(), "reika-state")
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "reika")
}

// sessionsDir is where the workspace's session logs live.
func (a *Agent) sessionsDir() string {
	if a.opts.SessionsDir != "" {
		return a.opts.SessionsDir
	}
	return defaultSessionsDir(a.stateDir, a.opts.Workspace.Root())
}

// defaultSessionsDir is a workspace's sessions directory under stateDir.
func defaultSessionsDir(stateDir, root string) string {
	sum := sha256.Sum256([]byte(root))
	name := filepath.Base(root)
	if name == "" || name == "/" || name == "." {
		name = "root"
	}
	return filepath.Join(stateDir, "sessions", name+"-"+hex.EncodeToString(sum[:6]))
}

func newSessionID() string {
	var b [3]byte
	rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// newSession starts a session: its fixed prefix is built now, once. It
// becomes the workspace's last session.
func (a *Agent) newSession(info llm.ModelInfo) (*session, error) {
	s := a.settings()
	root := a.opts.Workspace.Root()
	in := prefixInputs{root: root, window: info.Window, set: s}
	mode, err := resolveMode(root, a.currentMode())
	if err != nil {
		return nil, err
	}
	in.mode = mode
	if !s.Minimal {
		in.repo = a.repoMap(root)
		in.skills = a.findSkills(root)
	}
	ts := sessionTools(a.tools, in.skills, mode)
	p := buildPrefix(in)
	h := ctxwin.NewHistory(p.system(), tools.Specs(ts))
	dir := a.sessionsDir()
	id := newSessionID()
	if a.opts.NewSessionID != nil {
		id = a.opts.NewSessionID()
	}
	sess := &session{id: id, root: root, dir: dir, info: withoutWindow(info), tally: &PromptTally{}, out: a,
		offer: sessionOffer{mode: mode.Name, tools: ts, skills: in.skills, split: withToolParts(p.split(h.Tools, ""), ts)}}
	a.starting(sess)
	sess.m = a.newManager(h, info)
	l, err := createLog(filepath.Join(dir, sess.id+".jsonl"))
	if err != nil {
		return nil, fmt.Errorf("session log: %w", err)
	}
	l.fault = a.faultHook()
	sess.log = l
	err = l.append(record{Kind: recStart, Session: sess.id, Root: root, System: h.System, Tools: h.Tools, Model: info.Model, Mode: mode.Name,
		State: ctxwin.State{Window: info.Window}, Source: info.WindowSource, Started: time.Now().UTC().Format(time.RFC3339)})
	if err == nil {
		err = l.sync()
	}
	if err == nil {
		err = sess.markLast()
	}
	if err == nil {
		pruneResults(dir)
	}
	if err != nil {
		l.close()
		os.Remove(l.path)
		return nil, fmt.Errorf("session log: %w", err)
	}
	return sess, nil
}

// markLast makes the session the workspace's last one, the one a restart
// resumes: the session last worked in.
func (s *session) markLast() error {
	path := filepath.Join(s.dir, "last")
	if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) == s.id {
		return nil
	}
	return atomicfile.Write(path, []byte(s.id+"\n"))
}

// resultsDir is where the session's long results are saved for paging
// (bash, grep, glob and fetch_url output cut to fit): beside its log,
// kept as long as the log, so that a resumed session can still read them.
func (s *session) resultsDir() string {
	switch {
	case s.results != "":
		return s.results
	case s.dir == "" || s.id == "":
		return ""
	}
	return filepath.Join(s.dir, s.id+resultsSuffix)
}

const resultsSuffix = ".results"

// pruneResults removes the results directories (and titles, history.go)
// of the sessions under dir whose logs were deleted: a session's saved
// results go with it. A log is created before its results directory, so a
// live session's is never taken.
func pruneResults(dir string) {
	matches, _ := filepath.Glob(filepath.Join(dir, "*"+resultsSuffix))
	titles, _ := filepath.Glob(filepath.Join(dir, "*"+titleSuffix))
	for _, m := range append(matches, titles...) {
		log := strings.TrimSuffix(strings.TrimSuffix(m, resultsSuffix), titleSuffix) + ".jsonl"
		if _, err := os.Lstat(log); errors.Is(err, os.ErrNotExist) {
			os.RemoveAll(m)
		}
	}
}

// newManager applies the settings to a fresh manager.
func (a *Agent) newManager(h *ctxwin.History, info llm.ModelInfo) *ctxwin.Manager {
	s := a.settings()
	m := ctxwin.NewManager(h, info.Window)
	m.Setup().Configure(ctxwin.Settings{OutputLimit: info.OutputLimit, MaxTokens: s.MaxTokens, ReasoningRounds: s.ReasoningRounds,
		MinGenTokens: s.MinGenTokens})
	m.Setup().Outliner(a.outline)
	return m
}

// errNoSession says there is no session to resume.
var errNoSession = errors.New("no session to resume in this workspace")

// resumeSession replays the workspace's last session log, whether or not
// the engine has answered: info is what is known of the model now (its
// window wins over the log's), possibly nothing. It returns errLogBusy
// when another process owns the session.
//
// Nothing the log holds is thrown away. A line in the middle that is not a
// record is skipped (copied beside the log and blanked in it). A torn or
// garbage tail, or a record that cannot be replayed, ends the replay
// there: the session resumes from every record before it, the log is cut
// back to them (the bytes cut are kept beside it) before anything is
// appended. note says what happened for the user.
func (a *Agent) resumeSession(info llm.ModelInfo) (sess *session, note string, err error) {
	id, err := os.ReadFile(filepath.Join(a.sessionsDir(), "last"))
	if err != nil || strings.TrimSpace(string(id)) == "" {
		return nil, "", errNoSession
	}
	return a.resumeSessionID(info, strings.TrimSpace(string(id)))
}

// resumeSessionID replays the log of session id as resumeSession says
// (errNoSession when it has none).
func (a *Agent) resumeSessionID(info llm.ModelInfo, id string) (sess *session, note string, err error) {
	dir := a.sessionsDir()
	path := filepath.Join(dir, id+".jsonl")
	l, err := openLog(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", errNoSession
	}
	if err != nil {
		return nil, "", err
	}
	defer func() {
		if err != nil {
			l.close()
		}
	}()
	l.fault = a.faultHook()
	recs, ends, skipped, bad, err := readRecords(l.f, l.size)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 || recs[0].Kind != recStart || recs[0].Session == "" {
		return nil, "", fmt.Errorf("%s: not a session log (its first record is not whole)", path)
	}
	start := recs[0]
	h := ctxwin.NewHistory(start.System, start.Tools)
	info = fillFromLog(info, start)
	sess = &session{id: start.Session, root: start.Root, dir: dir, info: withoutWindow(info), log: l, tally: &PromptTally{}, out: a,
		offer: sessionOffer{mode: start.Mode, nested: map[string]bool{}}}
	a.starting(sess)
	sess.m = a.newManager(h, info)
	good := len(recs)
	for i, r := range recs[1:] {
		if rerr := replayRecord(sess.m, r); rerr != nil {
			bad = &badRecord{N: i + 2, Off: ends[i], Err: rerr}
			good = i + 1
			break
		}
		sess.replayed(r)
	}
	a.bindTools(sess)
	if info.Window > 0 {
		// What the engine (or the setting) says now wins over the log: the
		// engine may have restarted with another window.
		sess.setWindow(info.Window, sess.info.WindowSource)
	}
	sess.m.Restored()
	pruneResults(dir)
	kept, err := l.cut(ends[good-1])
	if err != nil {
		return nil, "", err
	}
	note = resumeNote(sess.id, good, bad, kept)
	if n := skippedBefore(skipped, ends[good-1]); n > 0 {
		note = joinNotes(note, skippedNote(sess.id, l, skipped[:n]))
	}
	return sess, note, nil
}

// resumeNote says which records of session id's log a resume could not
// use (bad, after the good ones) and where the rest of the log is kept;
// "" when all were used.
func resumeNote(id string, good int, bad *badRecord, kept string) string {
	if bad == nil {
		return ""
	}
	note := fmt.Sprintf("Resumed session %s from the %d records before record %d of its log, which could not be used (byte %d: %v)",
		id, good, bad.N, bad.Off, bad.Err)
	if kept != "" {
		note += "; the rest of the log is kept in " + kept
	}
	return note
}

// fillFromLog fills in the window and model a session's start record
// gives when the engine reports none.
func fillFromLog(info llm.ModelInfo, start record) llm.ModelInfo {
	if info.Window == 0 && start.Window > 0 {
		info.Window, info.WindowSource = start.Window, start.Source
	}
	if info.Model == "" {
		info.Model = start.Model
	}
	return info
}

// replayRecord applies one record of a log to a manager. A record that
// does not fit the history before it is an error, and so is a panic.
func replayRecord(m *ctxwin.Manager, r record) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("replaying a %s record: %v", r.Kind, p)
		}
	}()
	switch r.Kind {
	case recTurn:
		m.StartTurn(r.Prompt)
	case recRound:
		if r.Reply == nil {
			return errors.New("a round record without its reply")
		}
		if len(r.Results) != len(r.Reply.ToolCalls) {
			return fmt.Errorf("a round record with %d tool calls and %d results", len(r.Reply.ToolCalls), len(r.Results))
		}
		for _, res := range r.Results {
			if res == nil {
				return errors.New("a round record with an empty result")
			}
		}
		if m.H.Last() == nil {
			m.StartTurn("")
		}
		m.H.AddRound(*r.Reply)
		for _, res := range r.Results {
			m.H.AddResult(res)
		}
	case recEvent:
		if r.Event == nil {
			return errors.New("an event record without its event")
		}
		if f := r.Event.Fold; f != nil && (f.Recap == nil || f.Upto < 0 || f.Upto > len(m.H.Items)) {
			return fmt.Errorf("a fold of %d items in a history of %d", f.Upto, len(m.H.Items))
		}
		m.Apply(r.Event)
	case recState:
		m.Restore(r.State)
	case recPrefix:
		m.Setup().Prefix(r.System, r.Tools)
	case recTools:
		m.Setup().Tools(r.Tools)
	case recNote, recInfo:
	default:
		return fmt.Errorf("an unknown record kind %q", r.Kind)
	}
	return nil
}

// logState records what the manager learned.
func (s *session) logState() error {
	var tally *PromptTally
	if s.tally != nil {
		t := *s.tally
		tally = &t
	}
	return s.log.append(record{Kind: recState, State: s.m.State(), Source: s.info.WindowSource, Tally: tally})
}

// setWindow is the one place the session's window changes: the manager's
// window, and where it came from (the status item's source), change
// together.
func (s *session) setWindow(tokens int, source string) {
	s.m.Setup().Window(tokens)
	s.info.WindowSource = source
}

// modelInfo is what the session knows of its model, with the manager's
// window.
func (s *session) modelInfo() llm.ModelInfo {
	info := s.info
	info.Window = s.m.Gauge().Window()
	return info
}

// withoutWindow is info as a session keeps it: the window is its
// manager's.
func withoutWindow(info llm.ModelInfo) llm.ModelInfo {
	info.Window = 0
	return info
}

// skippedBefore counts the skipped lines before off (those after it were
// cut with the tail).
func skippedBefore(skipped []skippedLine, off int64) int {
	n := 0
	for n < len(skipped) && skipped[n].Off < off {
		n++
	}
	return n
}

// skippedNote sets the skipped lines aside and says so.
func skippedNote(id string, l *sessionLog, skipped []skippedLine) string {
	s := skipped[0]
	note := fmt.Sprintf("Session %s skipped %d line(s) of its log that are not records (the first: line %d, byte %d: %v); the records after them were resumed",
		id, len(skipped), s.Line, s.Off, s.Err)
	kept, err := l.setAside(skipped)
	switch {
	case err != nil:
		note += fmt.Sprintf("; setting them aside failed: %v", err)
	case kept != "":
		note += "; they are kept in " + kept
	}
	return note
}

func joinNotes(a, b string) string {
	if a == "" {
		return b
	}
	return a + ". " + b
}

// endJobs stops the session's background commands, saying what it killed.
func (s *session) endJobs(logf func(string, ...any)) {
	if s == nil || s.jobs == nil {
		return
	}
	if note := s.jobs.Stop(); note != "" {
		logf("reika: session %s ended: killed %s", s.id, note)
	}
}
