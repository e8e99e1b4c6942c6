package ctxwin

// What a Manager is set to (Manager.Setup): the context window, the limits
// of the user's settings, the fixed prefix, and what the agent injects
// (the outliner, the engine's chunk reuse).

// Setup sets what a Manager works with.
type Setup struct{ m *Manager }

// Setup sets what the manager works with.
func (m *Manager) Setup() Setup { return Setup{m} }

// Window sets the context window in tokens (0: unknown, docs/design.md §3.9), from the
// setting, the engine, or the engine's refusal of a request too long.
func (s Setup) Window(tokens int) { s.m.window = max(tokens, 0) }

// Configure sets the limits of the next requests.
func (s Setup) Configure(st Settings) {
	m := s.m
	m.outputLimit, m.maxTokensSetting, m.reasoningRounds = st.OutputLimit, st.MaxTokens, st.ReasoningRounds
	m.reserve.Pinned = st.MinGenTokens
}

// Settings are the limits in force.
func (s Setup) Settings() Settings {
	m := s.m
	return Settings{OutputLimit: m.outputLimit, MaxTokens: m.maxTokensSetting, ReasoningRounds: m.reasoningRounds,
		MinGenTokens: m.reserve.Pinned}
}

// Outliner gives shed reads their outline (the agent injects package
// outline: ctxwin stays free of tree-sitter).
func (s Setup) Outliner(o Outliner) { s.m.outline = o }

// ChunkReuse records the smallest chunk, in tokens, that the engine's
// chunk scan reuses after a deletion (llama.cpp's n_cache_reuse; 0 when it
// runs none). A fold keeps an event's opening where it deletes only when
// the scan reuses a run that short (foldMarks).
func (s Setup) ChunkReuse(tokens int) { s.m.chunkReuse = max(tokens, 0) }

// Prefix replaces the fixed prefix, the system message and the tool
// definitions (a mode switch): the next request renders anew, and what the
// engine counted of the old tool definitions no longer stands.
func (s Setup) Prefix(system string, tools []ToolSpec) {
	m := s.m
	h := m.H
	h.System, h.Tools = system, tools
	h.sentTools = false
	m.est.Fixed = 0
	h.invalidate()
}

// Tools replaces the tool definitions of the fixed prefix in a session
// (an MCP server's tools changed): one change of the prefix, which the
// next request carries whole. What the engine counted of the old
// definitions is forgotten; they are estimated until it counts again.
func (s Setup) Tools(tools []ToolSpec) {
	m := s.m
	m.H.Tools = tools
	m.H.sentTools = false
	m.est.Fixed = 0
}

// Prices prices text as the shed and fold decisions do (Manager.Prices).
type Prices struct{ e *Estimator }

// Prices prices text as the manager does.
func (m *Manager) Prices() Prices { return Prices{&m.est} }

// Tokens prices chars bytes as the shed and fold decisions do: carried
// bytes at the learned ratio, new ones at the density of new text.
func (p Prices) Tokens(chars int, carried bool) int { return p.e.Tokens(chars, carried) }

// MessageTokens prices a message as the next request will count it.
func (p Prices) MessageTokens(msg Message) int { return p.e.MessageTokens(msg) }

// ToolTokens prices the tool definitions; carried as in Tokens.
func (p Prices) ToolTokens(tools []ToolSpec, carried bool) int { return p.e.ToolTokens(tools, carried) }

// LearnedRatio is the ratio of the engine's counts to the baseline
// estimate, 1 before any report.
func (p Prices) LearnedRatio() float64 { return p.e.LearnedRatio() }
