package ctxwin

// SetTools replaces the tool definitions of the fixed prefix in a session
// (an MCP server's tools changed): one change of the prefix, which the
// next request carries whole. What the engine counted of the old
// definitions is forgotten; they are estimated until it counts again.
func (m *Manager) SetTools(tools []ToolSpec) {
	m.H.Tools = tools
	m.H.sentTools = false
	m.est.Fixed = 0
}
