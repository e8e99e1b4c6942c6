// Package scripted is a scripted agent.Service for tests of the language
// server: the real lsp.Serve runs over it, in process (the lsp package's
// tests) or in a binary (cmd/scriptedlsp, the server the Neovim plugin's
// tests start). Its turns and compactions are functions of the test;
// the rest of agent.Service (one turn at a time, cancel, sessions,
// settings, a status of its window) it does as that contract says.
//
// It is test support: the production binary does not import it
// (lsp/deps_test.go says so).
package scripted

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// What a new Agent has where the settings say nothing.
const (
	DefaultWindow   = 24000
	DefaultModel    = "fake"
	DefaultSavePath = "/state/session.md"
)

// Agent is a scripted agent.Service. The fields are set before the server
// gets it (in Config.NewAgent) and not changed after.
type Agent struct {
	// Opts is what Serve handed NewAgent: the server's Workspace, Approver
	// and Events, and the settings the agent starts with.
	Opts agent.Options
	// Turn runs each Ask, with the turn counted and marked running; nil
	// sends the user event and ends the turn done.
	Turn func(ctx context.Context, a *Agent, p agent.AskParams) agent.AskResult
	// Fold runs each Compact; nil says "Nothing to fold", as a notice and
	// as the result.
	Fold func(ctx context.Context, a *Agent) agent.CompactResult
	// Write writes the conversation for Save; nil writes nothing.
	Write func(a *Agent, path string) error
	// Window and Model are the context window and the model's name when
	// the settings do not set them; SavePath is where Save writes for "".
	Window   int
	Model    string
	SavePath string

	mu               sync.Mutex
	settings         agent.Settings          // the settings now; guarded by mu
	session          int                     // the session's number; guarded by mu
	turns            int                     // turns of the session; guarded by mu
	size             int                     // the request size the status shows; guarded by mu
	events           []agent.Event           // the session's full events, from Emit; guarded by mu
	running          context.CancelFunc      // the running turn's cancel; guarded by mu
	asks             []agent.AskParams       // guarded by mu
	updates          []agent.Settings        // guarded by mu
	closed           bool                    // guarded by mu
	transcriptLimits []int                   // the maxChars of each Transcript call; guarded by mu
	past             map[string]*pastSession // the sessions left (history.go); guarded by mu
	titles           map[string]string       // renamed sessions; guarded by mu
	started          time.Time               // when the session started; guarded by mu
	prompt           string                  // the session's first prompt; guarded by mu
}

// New returns an Agent built from opts, in its first session ("s1").
func New(opts agent.Options) *Agent {
	return &Agent{
		Opts:     opts,
		Window:   DefaultWindow,
		Model:    DefaultModel,
		SavePath: DefaultSavePath,
		settings: opts.Settings,
		session:  1,
	}
}

// Session is the id of the session now.
func (a *Agent) Session() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessionLocked()
}

func (a *Agent) sessionLocked() string { return fmt.Sprintf("s%d", a.session) }

// Turns is the number of turns of the session: during a turn, its number.
func (a *Agent) Turns() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.turns
}

// Emit sends a transcript event, with the session and turn filled in when
// they are unset, and keeps it (unless it is a streamed chunk) for Save
// and Transcript.
func (a *Agent) Emit(ev agent.Event) {
	a.mu.Lock()
	if ev.Session == "" {
		ev.Session = a.sessionLocked()
	}
	if ev.Turn == 0 {
		ev.Turn = a.turns
	}
	if !ev.Delta {
		a.events = append(a.events, ev)
	}
	a.mu.Unlock()
	a.Opts.Events.Transcript(ev)
}

// Events returns the session's events that Emit kept.
func (a *Agent) Events() []agent.Event {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.events)
}

// Resize sets the request size the status shows and returns the status.
func (a *Agent) Resize(size int) agent.Status {
	a.mu.Lock()
	a.size = size
	a.mu.Unlock()
	return a.Status()
}

// Settings returns the settings now: those the agent was built with, or
// the last UpdateSettings.
func (a *Agent) Settings() agent.Settings {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.settings
}

// Ask runs Turn, one at a time: a second Ask while one runs is refused.
func (a *Agent) Ask(ctx context.Context, p agent.AskParams) agent.AskResult {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a.mu.Lock()
	if a.running != nil {
		session := a.sessionLocked()
		a.mu.Unlock()
		return agent.AskResult{Session: session, Status: agent.AskError, Message: "a turn is running"}
	}
	a.running = cancel
	a.turns++
	if a.turns == 1 {
		a.prompt = p.Prompt
	}
	a.asks = append(a.asks, p)
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.running = nil
		a.mu.Unlock()
	}()
	if a.Turn == nil {
		a.Emit(agent.Event{Kind: agent.EventUser, Text: p.Prompt})
		return agent.AskResult{Session: a.Session(), Status: agent.AskDone}
	}
	return a.Turn(ctx, a, p)
}

// Compact runs Fold.
func (a *Agent) Compact(ctx context.Context) agent.CompactResult {
	if a.Fold != nil {
		return a.Fold(ctx, a)
	}
	a.Opts.Events.Notice(agent.Notice{Level: agent.LevelInfo, Text: "Nothing to fold"})
	return agent.CompactResult{Message: "Nothing to fold"}
}

// Cancel stops the running turn.
func (a *Agent) Cancel() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.running == nil {
		return false
	}
	a.running()
	return true
}

// Status is the status item: the chip of the size Resize set in the
// window of the settings (else Window), busy while a turn runs, as the real
// agent's is (the server asks it whether one does). The tooltip names the
// window and the settings that came from the editor.
func (a *Agent) Status() agent.Status {
	a.mu.Lock()
	defer a.mu.Unlock()
	window, model := a.Window, a.Model
	if a.settings.ContextWindow > 0 {
		window = a.settings.ContextWindow
	}
	if a.settings.Model != "" {
		model = a.settings.Model
	}
	st := agent.Status{Busy: a.running != nil, Model: model, Session: a.sessionLocked(), WindowSource: llm.SourceSetting}
	reserve := ctxwin.Reserve{}.Tokens(window)
	if ctxwin.Validate(window, reserve) != nil {
		st.Text, st.Level, st.Size, st.WindowSource = ctxwin.NewChip(a.size, nil).Text, agent.LevelOK, a.size, llm.SourceNone
		return st
	}
	b := ctxwin.NewBudget(window, reserve)
	chip := ctxwin.NewChip(a.size, &b)
	st.Text, st.Size = chip.Text, chip.Size
	st.Window, st.ShedPoint, st.Percent = &chip.Window, &chip.ShedPoint, &chip.Percent
	st.Level = agent.LevelOK
	if chip.Warning {
		st.Level = agent.LevelWarning
	}
	st.Tooltip = fmt.Sprintf("window %d, shed point %d (setting)\neditor settings: %s", window, b.ShedPoint, a.editorSettingsLocked())
	return st
}

// editorSettingsLocked lists the settings that came from the editor.
func (a *Agent) editorSettingsLocked() string {
	var names []string
	for name, from := range a.settings.Sources {
		if from == "editor" {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// Save writes the conversation with Write to path ("" is SavePath) and
// returns the path.
func (a *Agent) Save(path string) (string, error) {
	if path == "" {
		path = a.SavePath
	}
	if a.Write != nil {
		if err := a.Write(a, path); err != nil {
			return "", err
		}
	}
	return path, nil
}

// NewSession starts the next session ("s2", "s3"...): no turns, no events,
// an empty window.
func (a *Agent) NewSession() (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.leaveLocked()
	a.nextSessionLocked()
	return a.sessionLocked(), nil
}

// HasTurns reports whether the session has had a turn.
func (a *Agent) HasTurns() bool { return a.Turns() > 0 }

// Transcript answers with the events Emit kept, whatever maxChars, and
// records maxChars.
func (a *Agent) Transcript(maxChars int) (agent.TranscriptPage, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.transcriptLimits = append(a.transcriptLimits, maxChars)
	return agent.TranscriptPage{Session: a.sessionLocked(), Events: append([]agent.Event{}, a.events...)}, nil
}

// UpdateSettings records the settings and applies them.
func (a *Agent) UpdateSettings(s agent.Settings) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.updates = append(a.updates, s)
	a.settings = s
	return nil
}

// Close stops a running turn and marks the agent closed.
func (a *Agent) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	if a.running != nil {
		a.running()
	}
	return nil
}

// Asks returns the params of every Ask.
func (a *Agent) Asks() []agent.AskParams {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.asks)
}

// Updates returns the settings of every UpdateSettings.
func (a *Agent) Updates() []agent.Settings {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.updates)
}

// TranscriptLimits returns the maxChars of every Transcript call.
func (a *Agent) TranscriptLimits() []int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.transcriptLimits)
}

// Running reports whether a turn runs.
func (a *Agent) Running() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.running != nil
}

// Closed reports whether Close was called.
func (a *Agent) Closed() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.closed
}

var _ agent.Service = (*Agent)(nil)
