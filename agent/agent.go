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

	"github.com/reika-lsp/reika-lsp/agent/tools"
	"github.com/reika-lsp/reika-lsp/ctxwin"
	"github.com/reika-lsp/reika-lsp/internal/atomicfile"
	"github.com/reika-lsp/reika-lsp/outline"
)

// Agent is one workspace's agent. It implements Service.
type Agent struct {
	opts     Options
	tools    []tools.Tool
	stateDir string
	tempDir  string
	appr     *approvals
	events   Events
	logf     func(format string, args ...any)

	repoOnce sync.Once
	repo     repoMapper

	discovered    chan struct{} // closed when the first Info returned
	stopDiscovery context.CancelFunc
	countFailed   sync.Once // logs the first failure to count tokens

	mu      sync.Mutex
	set     Settings           // guarded by mu
	model   Model              // guarded by mu
	info    *ModelInfo         // what Info said; guarded by mu
	sess    *session           // guarded by mu; used only by whoever holds busy
	busy    bool               // a turn or a compact runs; guarded by mu
	cancel  context.CancelFunc // stops the running turn; guarded by mu
	done    chan struct{}      // closed when the running turn ends; guarded by mu
	turns   int                // turns in the session; guarded by mu
	status  Status             // guarded by mu
	failure string             // why the engine is down or the last turn failed; guarded by mu
	noticed map[string]bool    // conditions already announced; guarded by mu
	closed  bool               // guarded by mu
}

var _ Service = (*Agent)(nil)

// New builds an agent and starts discovering the model's window in the
// background; the status reports what it finds. Resume picks up the
// workspace's last session on the first turn.
func New(opts Options) (*Agent, error) {
	if opts.Workspace == nil || opts.Model == nil {
		return nil, errors.New("agent: a workspace and a model are required")
	}
	a := &Agent{
		opts:       opts,
		tools:      tools.All(),
		stateDir:   opts.StateDir,
		events:     opts.Events,
		logf:       opts.Logf,
		set:        opts.Settings,
		model:      opts.Model,
		noticed:    map[string]bool{},
		discovered: make(chan struct{}),
	}
	if a.stateDir == "" {
		a.stateDir = StateDir()
	}
	if a.events == nil {
		a.events = nopEvents{}
	}
	if a.logf == nil {
		a.logf = func(string, ...any) {}
	}
	if a.set.Approve == "" {
		a.set.Approve = ApproveAsk
	}
	if a.set.ReasoningRounds == 0 && a.set.Sources["reasoningRounds"] == "" {
		a.set.ReasoningRounds = DefaultReasoningRounds
	}
	dir, err := os.MkdirTemp("", "reika-")
	if err != nil {
		return nil, fmt.Errorf("agent: temp dir: %w", err)
	}
	a.tempDir = dir
	a.appr = newApprovals(a.set.Approve, opts.Approver)
	a.status = initialStatus(a.set)
	ctx, cancel := context.WithCancel(context.Background())
	a.stopDiscovery = cancel
	go a.discover(ctx)
	return a, nil
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

// discover asks the model for its window once, at start, and resumes the
// workspace's last session when asked to.
func (a *Agent) discover(ctx context.Context) {
	defer close(a.discovered)
	a.mu.Lock()
	model := a.model
	a.mu.Unlock()
	info, err := model.Info(ctx)
	a.mu.Lock()
	if err != nil {
		a.failure = err.Error()
	} else {
		a.info = &info
		a.failure = ""
	}
	a.mu.Unlock()
	if err == nil && a.opts.Resume {
		sess, rerr := a.resumeSession(info)
		switch {
		case rerr == nil:
			a.mu.Lock()
			a.sess, a.turns = sess, sess.m.H.Turns()
			a.mu.Unlock()
		case !errors.Is(rerr, errNoSession):
			a.logf("reika: could not resume the last session: %v", rerr)
		}
	}
	if err != nil {
		a.notice("engine", LevelError, err.Error())
	} else if info.Window <= 0 {
		reason := info.Reason
		if reason == "" {
			reason = "the engine did not report it"
		}
		a.notice("nowindow", LevelWarning, "No known context window ("+reason+"): nothing will be shed or folded. Set REIKA_CONTEXT_WINDOW.")
	}
	a.publishStatus(nil)
}

// modelInfo is what the engine says, asked again if the start-up
// discovery failed.
func (a *Agent) modelInfo(ctx context.Context) (ModelInfo, error) {
	<-a.discovered
	a.mu.Lock()
	info, model := a.info, a.model
	a.mu.Unlock()
	if info != nil {
		return *info, nil
	}
	got, err := model.Info(ctx)
	a.mu.Lock()
	if err == nil {
		a.info = &got
		a.failure = ""
		delete(a.noticed, "engine")
	} else {
		a.failure = err.Error()
	}
	a.mu.Unlock()
	return got, err
}

// begin claims the agent for a turn or a compact.
func (a *Agent) begin(ctx context.Context) (context.Context, func(), error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, nil, errors.New("the agent is shut down")
	}
	if a.busy {
		return nil, nil, errors.New("a turn is already running; wait for it to end or cancel it")
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	a.busy, a.cancel, a.done = true, cancel, done
	var once sync.Once
	end := func() {
		once.Do(func() {
			cancel()
			a.mu.Lock()
			a.busy, a.cancel = false, nil
			close(done)
			a.mu.Unlock()
		})
	}
	return ctx, end, nil
}

// session returns the session, resuming or starting one.
func (a *Agent) session(ctx context.Context) (*session, error) {
	select {
	case <-a.discovered:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	a.mu.Lock()
	sess := a.sess
	a.mu.Unlock()
	if sess != nil {
		return sess, nil
	}
	info, err := a.modelInfo(ctx)
	if err != nil {
		return nil, err
	}
	if sess == nil {
		if sess, err = a.newSession(info); err != nil {
			return nil, err
		}
	}
	a.mu.Lock()
	a.sess = sess
	a.turns = sess.m.H.Turns()
	a.mu.Unlock()
	return sess, nil
}

// Ask runs one turn.
func (a *Agent) Ask(ctx context.Context, p AskParams) AskResult {
	if strings.TrimSpace(p.Prompt) == "" && p.Attachment == nil {
		return AskResult{Status: AskError, Message: "the prompt is empty"}
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
	a.applySettings(sess)
	res := a.runTurn(ctx, sess, p)
	res.Session = sess.id
	a.mu.Lock()
	a.turns = sess.m.H.Turns()
	if res.Status == AskError {
		a.failure = res.Message
	} else {
		a.failure = ""
	}
	a.mu.Unlock()
	// The last status of the turn: not busy. The session is still ours
	// until end returns, and publishing after it could race a new turn.
	a.publishStatusBusy(sess, false)
	return res
}

// applySettings carries changed settings into the session's manager.
func (a *Agent) applySettings(sess *session) {
	s := a.settings()
	m := sess.m
	m.MaxTokensSetting = s.MaxTokens
	m.ReasoningRounds = s.ReasoningRounds
	m.Reserve.Pinned = s.MinGenTokens
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
	a.failure = err.Error()
	a.mu.Unlock()
	var u *UnreachableError
	if errors.As(err, &u) {
		a.notice("engine", LevelError, err.Error())
	}
	a.publishStatus(nil)
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
	ok, why := sess.m.CanCompact()
	if !ok {
		a.notice("", LevelInfo, why)
		return CompactResult{Message: why}
	}
	note := ""
	if sess.m.NoteFits() {
		note = a.noteRound(ctx, sess)
	}
	ev := sess.m.Compact(note)
	if ev == nil {
		return CompactResult{Message: "Nothing to fold"}
	}
	(&run{a: a, sess: sess, turn: sess.m.H.Turns()}).record(ev)
	sess.logState()
	if err := sess.log.sync(); err != nil {
		a.logf("reika: session log: %v", err)
	}
	// The last status of the compact: not busy (published while the
	// session is still ours, as Ask does).
	a.publishStatusBusy(sess, false)
	return CompactResult{Folded: true, RecapTokens: ev.Fold.RecapTokens, Message: foldLine(ev)}
}

// Cancel stops the running turn.
func (a *Agent) Cancel() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cancel == nil {
		return false
	}
	a.cancel()
	return true
}

// HasTurns reports whether the session has a turn.
func (a *Agent) HasTurns() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.turns > 0
}

// NewSession starts a fresh session.
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
	sess, err := a.newSession(info)
	if err != nil {
		return "", err
	}
	a.mu.Lock()
	old := a.sess
	a.sess, a.turns = sess, 0
	a.mu.Unlock()
	if old != nil {
		old.log.close()
	}
	a.appr.reset()
	a.publishStatusBusy(sess, false)
	return sess.id, nil
}

// UpdateSettings applies changed settings: approvals and budgets at once,
// a new endpoint or model from the next turn (when Options.NewModel is set).
func (a *Agent) UpdateSettings(s Settings) error {
	a.mu.Lock()
	old := a.set
	a.set = s
	newModel := a.opts.NewModel
	a.mu.Unlock()
	a.appr.setMode(s.Approve)
	if newModel != nil && (old.BaseURL != s.BaseURL || old.Model != s.Model || old.APIKey != s.APIKey ||
		old.ContextWindow != s.ContextWindow || old.ModelsURL != s.ModelsURL) {
		m, err := newModel(s)
		if err != nil {
			return err
		}
		info, ierr := m.Info(context.Background())
		a.mu.Lock()
		a.model = m
		if ierr == nil {
			a.info = &info
			a.failure = ""
			if a.sess != nil && !a.busy {
				a.sess.info = info
				a.sess.m.Window, a.sess.m.OutputLimit = info.Window, info.OutputLimit
			}
		} else {
			a.info = nil
			a.failure = ierr.Error()
		}
		a.mu.Unlock()
		a.publishStatus(nil)
	}
	return nil
}

// Close cancels a running turn, waits for it, and closes the session log.
func (a *Agent) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	if a.cancel != nil {
		a.cancel()
	}
	done := a.done
	a.mu.Unlock()
	a.stopDiscovery()
	<-a.discovered
	if done != nil {
		<-done
	}
	a.mu.Lock()
	sess := a.sess
	a.mu.Unlock()
	var err error
	if sess != nil {
		err = sess.log.close()
	}
	os.RemoveAll(a.tempDir)
	return err
}

// Save writes the whole conversation, unshed, as Markdown.
func (a *Agent) Save(path string) (string, error) {
	a.mu.Lock()
	sess := a.sess
	a.mu.Unlock()
	if sess == nil {
		return "", errors.New("there is no conversation to save yet")
	}
	if path == "" {
		path = strings.TrimSuffix(sess.log.path, ".jsonl") + ".md"
	} else if !filepath.IsAbs(path) {
		path = filepath.Join(a.opts.Workspace.Root(), path)
	}
	if err := sess.log.sync(); err != nil {
		return "", err
	}
	recs, err := readLog(sess.log.path)
	if err != nil {
		return "", err
	}
	if err := atomicfile.Write(path, []byte(transcriptMarkdown(recs))); err != nil {
		return "", err
	}
	return path, nil
}

// repoMapper is the repo map of package outline.
type repoMapper interface {
	Render(budget int) (string, error)
	Touch(rel string)
}

// repoMap is the workspace's repo map, built once.
func (a *Agent) repoMap(root string) repoMapper {
	a.repoOnce.Do(func() { a.repo = newRepoMap(root) })
	return a.repo
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
	return outline.Summary(r.Path, src, budget)
}
