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

	"github.com/reika-lsp/reika-lsp/agent/tools"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// session is one conversation: its history as the model sees it, its log,
// and what the agent learned. Only the goroutine running a turn (or a
// compact) touches it.
type session struct {
	id   string
	root string
	m    *ctxwin.Manager
	log  *sessionLog
	info ModelInfo
	// prev is the last request sent, for the debug line.
	prev []ctxwin.Message
	// reads counts reads per path in the current turn, for task payloads.
	taskPaths map[string]bool
	// shrunkAt is the round of the last shed or fold, for the status.
	shrunkAt int
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

// sessionsDir is where a workspace's session logs live.
func sessionsDir(stateDir, root string) string {
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

// newSession starts a session: its fixed prefix is built now, once.
func (a *Agent) newSession(info ModelInfo) (*session, error) {
	s := a.settings()
	root := a.opts.Workspace.Root()
	var repo repoMapper
	if !s.Minimal {
		repo = a.repoMap(root)
	}
	h := ctxwin.NewHistory(fixedPrefix(root, info.Window, s, repo), tools.Specs(a.tools))
	sess := &session{id: newSessionID(), root: root, info: info}
	sess.m = a.newManager(h, info)
	path := filepath.Join(sessionsDir(a.stateDir, root), sess.id+".jsonl")
	l, err := createLog(path)
	if err != nil {
		return nil, fmt.Errorf("session log: %w", err)
	}
	sess.log = l
	err = l.append(record{Kind: recStart, Session: sess.id, Root: root, System: h.System, Tools: h.Tools, Model: info.Model,
		Window: info.Window, Source: info.WindowSource})
	if err == nil {
		err = l.sync()
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(filepath.Dir(path), "last"), []byte(sess.id+"\n"), 0o600)
	}
	if err != nil {
		l.close()
		return nil, fmt.Errorf("session log: %w", err)
	}
	return sess, nil
}

// newManager applies the settings to a fresh manager.
func (a *Agent) newManager(h *ctxwin.History, info ModelInfo) *ctxwin.Manager {
	s := a.settings()
	m := ctxwin.NewManager(h, info.Window)
	m.OutputLimit = info.OutputLimit
	m.MaxTokensSetting = s.MaxTokens
	m.ReasoningRounds = s.ReasoningRounds
	m.Reserve.Pinned = s.MinGenTokens
	m.Outline = a.outline
	return m
}

// errNoSession says there is no session to resume.
var errNoSession = errors.New("no session to resume in this workspace")

// resumeSession replays the workspace's last session log.
func (a *Agent) resumeSession(info ModelInfo) (*session, error) {
	dir := sessionsDir(a.stateDir, a.opts.Workspace.Root())
	id, err := os.ReadFile(filepath.Join(dir, "last"))
	if err != nil {
		return nil, errNoSession
	}
	path := filepath.Join(dir, strings.TrimSpace(string(id))+".jsonl")
	recs, err := readLog(path)
	if err != nil {
		return nil, err
	}
	start := recs[0]
	h := ctxwin.NewHistory(start.System, start.Tools)
	if start.Window > 0 && info.Window == 0 {
		info.Window, info.WindowSource = start.Window, start.Source
	}
	sess := &session{id: start.Session, root: start.Root, info: info}
	sess.m = a.newManager(h, info)
	replay(sess.m, recs[1:])
	if info.Window > 0 {
		// What the engine (or the setting) says now wins over the log: the
		// engine may have restarted with another window.
		sess.m.Window = info.Window
	}
	sess.m.Restored()
	l, err := createLog(path)
	if err != nil {
		return nil, err
	}
	sess.log = l
	return sess, nil
}

// replay applies a log's records to a manager. A turn with no round yet
// is kept; a round is only ever logged whole.
func replay(m *ctxwin.Manager, recs []record) {
	for _, r := range recs {
		switch r.Kind {
		case recTurn:
			m.StartTurn(r.Prompt)
		case recRound:
			if r.Reply == nil {
				continue
			}
			if m.H.Last() == nil {
				m.StartTurn("")
			}
			m.H.AddRound(*r.Reply)
			for _, res := range r.Results {
				m.H.AddResult(res)
			}
		case recEvent:
			if r.Event != nil {
				m.Apply(r.Event)
			}
		case recState:
			if e := r.Estimator; e != nil {
				m.Est.Ratio, m.Est.Samples = e.Ratio, e.Samples
				m.Est.Overhead, m.Est.Fixed, m.Est.Density = e.Overhead, e.Fixed, e.Density
			}
			if r.Reserve != nil {
				m.Reserve.Largest = r.Reserve.Largest
			}
			if r.Progress != nil {
				m.Progress = *r.Progress
			}
			if r.Window > 0 {
				m.Window = r.Window
			}
		}
	}
}

// logState records what the manager learned.
func (s *session) logState() error {
	est := s.m.Est
	res := s.m.Reserve
	progress := s.m.Progress
	return s.log.append(record{Kind: recState, Estimator: &est, Reserve: &res, Progress: &progress,
		Window: s.m.Window, Source: s.info.WindowSource})
}
