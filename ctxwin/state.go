package ctxwin

// What a Manager is set to and what it learns: the agent sets the window
// (Setup.Window, its one writer) and the limits of its settings
// (Setup.Configure), and a session log saves what the manager learned
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
// as it is. The settings (Setup.Configure) are not part of it.
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
		m.Setup().Window(s.Window)
	}
}
