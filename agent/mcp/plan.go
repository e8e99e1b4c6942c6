package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// Server states, as Report says them.
const (
	StateConnected = "connected" // its tools are offered
	StateLeftOut   = "left out"  // it runs, but its tools do not fit the budget
	StateFailed    = "failed"    // it did not start
	StateDown      = "stopped"   // it started and then stopped
)

// Report is what became of one server, for the status, the window command
// and the log.
type Report struct {
	Name  string `json:"name"`
	From  string `json:"from"`
	State string `json:"state"`
	Why   string `json:"why,omitempty"`
	// Tools is how many tools the server lists, Chars the characters of
	// their definitions (name, description and parameters, as ctxwin
	// counts them).
	Tools int `json:"tools"`
	Chars int `json:"chars"`
}

// Line is the report on one line.
func (r Report) Line() string {
	switch r.State {
	case StateConnected:
		return fmt.Sprintf("%s (%s): %d tools, %d chars", r.Name, r.From, r.Tools, r.Chars)
	case StateLeftOut:
		return fmt.Sprintf("%s (%s): %d tools, %d chars, left out: %s", r.Name, r.From, r.Tools, r.Chars, r.Why)
	}
	return fmt.Sprintf("%s (%s): %s: %s", r.Name, r.From, r.State, r.Why)
}

// Plan names the tools of every running server (servers in the order they
// were started, tools by name) and admits them a whole server at a time,
// while the definitions admitted stay within budget characters (0: no
// bound). reserved are the agent's own tool names. It returns the tools
// admitted and a report per server, failed ones included.
func (s *Set) Plan(budget int, reserved []string) ([]*Tool, []Report) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := newNamer(reserved)
	var admitted []*Tool
	var reports []Report
	used := 0
	for _, c := range s.conns {
		r := Report{Name: c.srv.Name, From: c.srv.From}
		switch {
		case c.err != nil && c.sess == nil:
			r.State, r.Why = StateFailed, c.err.Error()
			reports = append(reports, r)
			continue
		case c.err != nil:
			r.State, r.Why = StateDown, c.err.Error()
			reports = append(reports, r)
			continue
		}
		var ts []*Tool
		for _, t := range c.tools {
			ts = append(ts, &Tool{Server: c.srv.Name, Orig: t.Name, Spec: spec(n.name(c.srv.Name, t.Name), c.srv.Name, t)})
			r.Chars += ctxwin.ToolChars([]ctxwin.ToolSpec{ts[len(ts)-1].Spec})
		}
		r.Tools = len(ts)
		if budget > 0 && used+r.Chars > budget {
			r.State = StateLeftOut
			r.Why = fmt.Sprintf("its tool definitions take %d chars (about %d tokens), more than the %d chars left of the MCP budget of %d",
				r.Chars, r.Chars/4, budget-used, budget)
			reports = append(reports, r)
			continue
		}
		used += r.Chars
		r.State = StateConnected
		admitted = append(admitted, ts...)
		reports = append(reports, r)
	}
	return admitted, reports
}

// spec is the definition of a server's tool in the request.
func spec(name, server string, t *sdk.Tool) ctxwin.ToolSpec {
	params := json.RawMessage(`{"type":"object","properties":{}}`)
	if t.InputSchema != nil {
		if b, err := json.Marshal(t.InputSchema); err == nil && string(b) != "null" {
			params = b
		}
	}
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = t.Title
	}
	if desc == "" {
		desc = fmt.Sprintf("The tool %s of the MCP server %s.", t.Name, server)
	}
	return ctxwin.ToolSpec{Name: name, Description: desc, Parameters: params}
}
