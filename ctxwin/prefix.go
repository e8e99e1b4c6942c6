package ctxwin

// SetPrefix replaces the fixed prefix, the system message and the tool
// definitions (a mode switch): the next request renders anew, and what the
// engine counted of the old tool definitions no longer stands.
func (m *Manager) SetPrefix(system string, tools []ToolSpec) {
	h := m.H
	h.System, h.Tools = system, tools
	h.sentTools = false
	m.est.Fixed = 0
	h.invalidate()
}
