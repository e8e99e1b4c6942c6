package ctxwin

// What a Manager is set to and what it learns, behind methods: the agent
// sets the window (SetWindow, its one writer) and the limits of its
// settings (Configure), and a session log saves what the manager learned
// (State) so that a resumed session restores it (Restore) and makes the
// same decisions.

// Settings are the limits the user's settings and the model put on
// requests.
type Settings struct {
	// OutputLimit is the model's output limit (catalog), 0 when unknown.
	OutputLimit int
	// MaxTokens is REIKA_MAX_TOKENS, 0 when unset.
	MaxTokens int
	// ReasoningRounds is how many rounds keep their reasoning without a
	// known window.
	ReasoningRounds int
	// MinGenTokens pins the generation reserve (REIKA_MIN_GEN_TOKENS), 0
	// to learn it.
	MinGenTokens int
}

// Settings are the limits in force.
func (m *Manager) Settings() Settings {
	return Settings{OutputLimit: m.outputLimit, MaxTokens: m.maxTokensSetting, ReasoningRounds: m.reasoningRounds,
		MinGenTokens: m.reserve.Pinned}
}

// Configure sets the limits of the next requests.
func (m *Manager) Configure(s Settings) {
	m.outputLimit, m.maxTokensSetting, m.reasoningRounds = s.OutputLimit, s.MaxTokens, s.ReasoningRounds
	m.reserve.Pinned = s.MinGenTokens
}

// Window is the context window in tokens, 0 when unknown.
func (m *Manager) Window() int { return m.window }

// SetWindow sets the context window in tokens (0: unknown, docs/design.md §3.9), from the
// setting, the engine, or the engine's refusal of a request too long.
func (m *Manager) SetWindow(tokens int) { m.window = max(tokens, 0) }

// SetOutliner gives shed reads their outline (the agent injects package
// outline: ctxwin stays free of tree-sitter).
func (m *Manager) SetOutliner(o Outliner) { m.outline = o }

// State is what a manager learned, as a session log keeps it: the
// estimator's counts, the largest reply (the reserve), the thrash guard,
// and the window in force.
type State struct {
	Estimator *Estimator `json:"estimator,omitempty"`
	Reserve   *Reserve   `json:"reserve,omitempty"`
	Progress  *Progress  `json:"progress,omitempty"`
	Window    int        `json:"window,omitempty"`
}

// State is what the manager learned so far.
func (m *Manager) State() State {
	est := Estimator{Ratio: m.est.Ratio, Samples: m.est.Samples, Overhead: m.est.Overhead, Fixed: m.est.Fixed, Density: m.est.Density}
	res, progress := m.reserve, m.progress
	return State{Estimator: &est, Reserve: &res, Progress: &progress, Window: m.window}
}

// Restore takes up what a session log saved (State); what it lacks stays
// as it is. The settings (Configure) are not part of it.
func (m *Manager) Restore(s State) {
	if e := s.Estimator; e != nil {
		m.est.Ratio, m.est.Samples = e.Ratio, e.Samples
		m.est.Overhead, m.est.Fixed, m.est.Density = e.Overhead, e.Fixed, e.Density
	}
	if s.Reserve != nil {
		m.reserve.Largest = s.Reserve.Largest
	}
	if s.Progress != nil {
		m.progress = *s.Progress
	}
	if s.Window > 0 {
		m.SetWindow(s.Window)
	}
}

// Thrashing reports that ThrashLimit shrinks in a row made no progress.
func (m *Manager) Thrashing() bool { return m.progress.Stalled >= ThrashLimit }

// Stalled says why the shrinks made no progress and what to do (thrash.go).
func (m *Manager) Stalled() string {
	b, _ := m.Budget()
	return m.progress.Explain(b)
}
