// Package agent runs the coding agent: sessions per workspace, turns and
// rounds, the tools, the note round, shed and fold on real requests, and a
// session log that loses nothing. ctxwin decides what the model sees; this
// package carries it out and reports it (Events). It imports neither
// go.lsp.dev nor go-openai: the front end and the engine come in through
// the interfaces of api.go and model.go.
package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/agent/tools"
	"github.com/reika-lsp/reika-lsp/ctxwin"
	"github.com/reika-lsp/reika-lsp/outline"
)

// Agent is one workspace's agent. It implements Service.
//
// What it holds comes in three lifetimes. The agent's own lives as long
// as the server: the settings, the engine and what it said of its model
// (eng), the MCP servers, the approvals, what the editor was told. The
// session's (session) lives from one new session to the next: its log,
// its transcript, its manager, which alone owns its window. The turn's
// lives for one prompt: the run claim (turn) and the loop (run, loop.go).
//
// One guard says whether a turn is running: the run claim (begin). A turn,
// a compact and a new session hold it; a second one is refused while it is
// held. The session belongs to the claim's holder; Save reads only its log,
// which is safe for concurrent use; a settings change or a model the
// engine reports is applied by the holder at its next round, or at once
// when nothing holds the session (changes.go).
type Agent struct {
	// Set by New and not changed after: read without the lock.
	opts     Options
	tools    []tools.Tool
	stateDir string
	tempDir  string
	appr     *approvals // guards itself
	events   Events
	logf     func(format string, args ...any)

	repo lazyRepoMap // guards itself

	// The rest is guarded by mu, grouped by concern: the agent's own
	// (set, mode, mcp), the engine's (eng), the session and the claim on
	// it (sess, turn), and the editor's (told). With the eight above, more
	// than fifteen fields: each group is as small as its concern.
	mu     sync.Mutex
	set    Settings    // the settings in force
	mode   string      // the mode /mode chose ("": the setting's)
	mcp    mcpServers  // the MCP servers (mcpservers.go)
	eng    engineState // the engine and its model (enginestate.go)
	sess   *session    // used only by its owner (see session)
	turn   turnState   // the run claim (turnstate.go)
	told   toldState   // what the editor was told (status.go)
	closed bool
	// logFault, when set (tests), is given to every session log.
	logFault func(off int64, n int) error
}

var _ Service = (*Agent)(nil)

// Discovery retries: the first wait, doubled after each failure up to the
// second.
const (
	discoveryRetry    = time.Second
	discoveryMaxRetry = 30 * time.Second
)

// New builds an agent. With Options.Resume it resumes the workspace's last
// session at once, whether or not the engine answers yet; the model's
// window is discovered in the background, again and again until the engine
// answers, and the status reports what it finds.
func New(opts Options) (*Agent, error) {
	if opts.Workspace == nil || opts.Model == nil {
		return nil, errors.New("agent: a workspace and a model are required")
	}
	a := &Agent{
		opts:     opts,
		tools:    tools.All(),
		stateDir: opts.StateDir,
		events:   opts.Events,
		logf:     opts.Logf,
		set:      opts.Settings,
		eng:      engineState{model: opts.Model, retryBase: discoveryRetry},
		told:     toldState{noticed: map[string]bool{}},
	}
	a.turn.idle = sync.NewCond(&a.mu)
	if a.stateDir == "" {
		a.stateDir = StateDir()
	}
	if a.events == nil {
		a.events = nopEvents{}
	}
	if a.logf == nil {
		a.logf = func(string, ...any) {}
	}
	a.set = withDefaults(a.set)
	hideSecrets(a.set, a.logf)
	dir, err := os.MkdirTemp("", "reika-")
	if err != nil {
		return nil, fmt.Errorf("agent: temp dir: %w", err)
	}
	a.tempDir = dir
	a.appr = newApprovals(a.set.Approve, opts.Approver)
	a.told.status = initialStatus(a.set, opts.Workspace.Root())
	a.watchLoading(opts.Model)
	if opts.Resume {
		a.resumeAtStart()
	}
	a.startDiscovery(opts.Model, 0, false)
	return a, nil
}

// withDefaults fills the settings a caller may leave zero.
func withDefaults(s Settings) Settings {
	if s.Approve == "" {
		s.Approve = ApproveAsk
	}
	if s.ReasoningRounds == 0 && s.Sources["reasoningRounds"] == "" {
		s.ReasoningRounds = DefaultReasoningRounds
	}
	return s
}

// resumeAtStart resumes the workspace's last session before anything else
// runs, and says what it could not do.
func (a *Agent) resumeAtStart() {
	sess, note, err := a.resumeSession(a.knownInfo())
	switch {
	case err == nil:
		a.setSessionLocked(sess)
		a.keepSessionMode(sess)
		if note != "" {
			a.notice("", LevelWarning, note)
		}
		a.publishStatusBusy(sess, false)
	case errors.Is(err, errLogBusy):
		msg := "The last session of this workspace is open in another reika-lsp (another editor window, or reika-lsp run); " +
			"this one starts a new session on the first ask and leaves that one alone."
		a.notice("", LevelWarning, msg)
	case !errors.Is(err, errNoSession):
		msg := fmt.Sprintf("Could not resume the last session (%v); a new one starts on the first ask, and its log is left as it is.", err)
		a.notice("", LevelWarning, msg)
	}
}

type nopEvents struct{}

func (nopEvents) Transcript(Event)  {}
func (nopEvents) Status(Status)     {}
func (nopEvents) Notice(Notice)     {}
func (nopEvents) Progress(Progress) {}

func (a *Agent) settings() Settings {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.set
}

// faultHook is the test hook of session logs, nil outside tests.
func (a *Agent) faultHook() func(off int64, n int) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.logFault
}

// session returns the session, starting one when there is none, with
// what the engine said of its model, or, when it cannot be reached, with
// what is known without it.
func (a *Agent) session(ctx context.Context) (*session, error) {
	info, err := a.modelInfo(ctx)
	if err != nil {
		if !errors.As(err, new(*llm.UnreachableError)) {
			return nil, err
		}
		// The engine is down: the turn starts all the same, so that its
		// prompt is in the log before anything waits for the engine (the
		// model waits for it; see engineDown).
		info = a.knownInfo()
	}
	a.mu.Lock()
	sess := a.sess
	a.mu.Unlock()
	if sess != nil {
		return sess, nil
	}
	a.startMCP(ctx, info.Window)
	if sess, err = a.newSession(info); err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.setSessionLocked(sess)
	a.mu.Unlock()
	return sess, nil
}

// Ask runs one turn.
func (a *Agent) Ask(ctx context.Context, p AskParams) AskResult {
	retry := p.Retry && strings.TrimSpace(p.Prompt) == "" && p.Attachment == nil
	if strings.TrimSpace(p.Prompt) == "" && p.Attachment == nil && !retry {
		return AskResult{Status: AskError, Message: "the prompt is empty"}
	}
	if res, handled := a.slashPrompt(ctx, &p); !retry && handled {
		return res
	}
	ctx, end, err := a.begin(ctx)
	if err != nil {
		return AskResult{Session: a.sessionID(), Status: AskError, Message: err.Error()}
	}
	defer end()
	a.publishStatus(nil)
	sess, err := a.session(ctx)
	if err != nil {
		a.fail(err)
		return AskResult{Status: AskError, Message: err.Error()}
	}
	a.applyChanges(sess)
	if err := a.switchMode(sess); err != nil {
		return AskResult{Session: sess.id, Status: AskError, Message: err.Error()}
	}
	a.syncMCP(ctx, sess)
	var res AskResult
	if retry {
		res = a.retryTurn(ctx, sess)
	} else if err := promptFits(taskPrompt(p), sess.m.Gauge().Window()); err != nil {
		return AskResult{Session: sess.id, Status: AskError, Message: err.Error()}
	} else {
		res = a.runTurn(ctx, sess, p)
	}
	res.Session = sess.id
	a.mu.Lock()
	a.turn.count = sess.m.H.Turns()
	if res.Status == AskError {
		a.eng.failure = res.Message
	} else {
		a.eng.failure = ""
	}
	a.mu.Unlock()
	// The last status of the turn: not busy. The session is still ours
	// until end returns, and publishing after it could race a new turn.
	a.publishStatusBusy(sess, false)
	return res
}

func (a *Agent) sessionID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sess == nil {
		return ""
	}
	return a.sess.id
}

// fail records that the engine is down or a turn failed.
func (a *Agent) fail(err error) {
	a.mu.Lock()
	a.eng.failure = err.Error()
	a.mu.Unlock()
	var u *llm.UnreachableError
	if errors.As(err, &u) {
		a.notice("engine", LevelError, err.Error())
	}
	a.publishStatus(nil)
}

// clearNotice ends a condition announced with notice(key, ...), so that
// it is announced again when it comes back.
func (a *Agent) clearNotice(key string) {
	a.mu.Lock()
	delete(a.told.noticed, key)
	a.mu.Unlock()
}

// Compact folds on demand, after the note round.
func (a *Agent) Compact(ctx context.Context) CompactResult {
	ctx, end, err := a.begin(ctx)
	if err != nil {
		return CompactResult{Message: err.Error()}
	}
	defer end()
	a.mu.Lock()
	sess := a.sess
	a.mu.Unlock()
	if sess == nil || sess.m.H.Turns() == 0 {
		a.notice("", LevelInfo, "Nothing to fold")
		return CompactResult{Message: "Nothing to fold"}
	}
	a.applyChanges(sess)
	ok, why := sess.m.CanCompact()
	if !ok {
		a.notice("", LevelInfo, why)
		return CompactResult{Message: why}
	}
	note := ""
	if sess.m.NoteRound().Fits {
		note = sess.note(ctx, a.currentModel(), a.logf)
	}
	ev := sess.m.Compact(note)
	if ev == nil {
		return CompactResult{Message: "Nothing to fold"}
	}
	sess.record(ev)
	sess.logState()
	if err := sess.log.sync(); err != nil {
		msg := logStopped(err).Error()
		a.logf("reika: %s", msg)
		a.notice("log", LevelError, msg)
		a.publishStatusBusy(sess, false)
		return CompactResult{Message: msg}
	}
	// The last status of the compact: not busy (published while the
	// session is still ours, as Ask does).
	a.publishStatusBusy(sess, false)
	return CompactResult{Folded: true, RecapTokens: ev.Fold.RecapTokens, Message: foldLine(ev)}
}

// NewSession starts a fresh session. It is refused while a turn runs.
func (a *Agent) NewSession() (string, error) {
	_, end, err := a.begin(context.Background())
	if err != nil {
		return "", err
	}
	defer end()
	info, err := a.modelInfo(context.Background())
	if err != nil {
		a.fail(err)
		return "", err
	}
	a.startMCP(context.Background(), info.Window)
	sess, err := a.newSession(info)
	if err != nil {
		return "", err
	}
	a.mu.Lock()
	old := a.sess
	a.setSessionLocked(sess)
	a.mu.Unlock()
	if old != nil {
		old.endJobs(a.logf)
		if err := old.log.close(); err != nil {
			a.logf("reika: closing the session log: %v", err)
		}
	}
	a.appr.reset()
	a.publishStatusBusy(sess, false)
	return sess.id, nil
}

// Close cancels a running turn, waits for it and for discovery, and closes
// the session log (releasing it for another process).
func (a *Agent) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	if a.turn.cancel != nil {
		a.turn.cancel()
	}
	done := a.turn.done
	a.turn.waitBrief()
	a.mu.Unlock()
	a.stopDiscoveryLoop()
	a.eng.discovering.Wait()
	if done != nil {
		<-done
	}
	a.mu.Lock()
	sess := a.sess
	a.mu.Unlock()
	var err error
	if sess != nil {
		sess.endJobs(a.logf)
		err = sess.log.close()
	}
	a.closeMCP()
	os.RemoveAll(a.tempDir)
	return err
}

// repoMapper is the repo map of package outline.
type repoMapper interface {
	Render(budget int) (string, error)
	Touch(rel string)
}

// repoMap is the workspace's repo map, built once.
func (a *Agent) repoMap(root string) repoMapper {
	a.repo.once.Do(func() { a.repo.m = newRepoMap(root) })
	return a.repo.m
}

// lazyRepoMap is the workspace's repo map, built on first use.
type lazyRepoMap struct {
	once sync.Once
	m    repoMapper
}

// outline gives a shed read its outline: from the bytes read when the
// process still has them, else from the file as it is now.
func (a *Agent) outline(r *ctxwin.Result, budget int) string {
	src := r.Source
	if src == nil && r.Path != "" {
		p := r.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(a.opts.Workspace.Root(), p)
		}
		data, err := a.opts.Workspace.ReadFile(p)
		if err != nil {
			return ""
		}
		src = data
	}
	if r.StartLine > 1 || r.EndLine > 0 && r.TotalLines > 0 && r.EndLine < r.TotalLines {
		// A read of part of the file: the declarations it showed.
		return outline.SummaryLines(r.Path, src, r.StartLine, r.EndLine, budget)
	}
	return outline.Summary(r.Path, src, budget)
}

// hideSecrets keeps the variables that may hold a key, and the key itself
// under any name, out of every tool process (see tools.HideSecrets).
func hideSecrets(s Settings, logf func(string, ...any)) {
	var values []string
	if s.APIKey != "" {
		values = append(values, s.APIKey)
	}
	if err := tools.HideSecrets(s.SecretEnv(), values); err != nil {
		logf("reika: %v", err)
	}
}
