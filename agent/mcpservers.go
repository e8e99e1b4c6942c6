package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/reika-lsp/reika-lsp/agent/approval"
	"github.com/reika-lsp/reika-lsp/agent/mcp"
	"github.com/reika-lsp/reika-lsp/agent/tools"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// mcpServers is the agent's MCP servers. They are started once, before the
// first session's fixed prefix is built, so their tools are in it from the
// first request. Guarded by Agent.mu; set is safe for concurrent use.
type mcpServers struct {
	started bool
	set     *mcp.Set
	reports []mcp.Report
	// notes are what the transcript says at the next turn (a server that
	// did not start, stopped, or was left out).
	notes []string
}

// KindMCPTrust is the approval kind of the question whether to start the
// servers of a workspace's .mcp.json; its answers are Allow, AllowSession,
// Deny and Never (trustWorkspace).
const KindMCPTrust = mcp.KindTrust

// MCPBudgetPercent is the share of the window the MCP servers' tool
// definitions may take of the fixed prefix. With the repo map's 5%, the
// system prompt and our own tools, the prefix stays under about a quarter
// of the window, which leaves the shed point (0.9 of the usable window)
// room for the work: a 32k window gives MCP tools 4.8k tokens, a typical
// server's ten to twenty tools; an 8k window 1.2k, a few small tools.
const MCPBudgetPercent = 15

// MCPBudgetChars is the MCP servers' share of a window of window tokens,
// in characters of tool definitions at four a token; 0 (no bound) when
// the window is unknown.
func MCPBudgetChars(window int) int {
	return window * MCPBudgetPercent / 100 * 4
}

// startMCP starts the configured servers once: the user's (config.toml)
// and, when the user trusts them, the workspace's (.mcp.json). A server
// that does not start is reported and left out; the session goes on.
func (a *Agent) startMCP(ctx context.Context, window int) {
	a.mu.Lock()
	started := a.mcp.started
	a.mcp.started = true
	a.mu.Unlock()
	if started {
		return
	}
	servers, notes := a.mcpServersToStart(ctx)
	set := mcp.NewSet(mcp.Options{Environ: mcpEnviron, Logf: a.logf, OnDown: a.mcpDown})
	if len(servers) > 0 {
		set.Start(ctx, servers)
	}
	a.mu.Lock()
	a.mcp.set = set
	a.mcp.notes = append(a.mcp.notes, notes...)
	a.mu.Unlock()
	a.planMCP(window)
}

// mcpEnviron is a stdio MCP server's environment: the server's without
// secrets, marked as the server's own child so that no command's sweep
// takes it for an orphan the command left.
func mcpEnviron() []string { return append(tools.Environ(), tools.ServerChildVar+"=mcp") }

// mcpServersToStart are the user's servers and the workspace's when it is
// trusted (asking the user the first time, and again when .mcp.json
// changes); a workspace server with the name of one of the user's is the
// user's. notes say what is not started and why.
func (a *Agent) mcpServersToStart(ctx context.Context) (servers []mcp.Server, notes []string) {
	user, err := mcp.LoadUser(a.opts.MCPConfig, nil)
	if err != nil {
		notes = append(notes, fmt.Sprintf("MCP servers: %v", err))
	}
	servers = user
	root := a.opts.Workspace.Root()
	ws, hash, err := mcp.LoadWorkspace(root, nil)
	if err != nil {
		notes = append(notes, fmt.Sprintf("MCP servers: %v", err))
	}
	ws = slices.DeleteFunc(ws, func(s mcp.Server) bool {
		if slices.ContainsFunc(user, func(u mcp.Server) bool { return u.Name == s.Name }) {
			notes = append(notes, fmt.Sprintf("MCP server %s of %s is not started: %s names a server %s too, and that one is used", s.Name, mcp.WorkspaceFile, a.opts.MCPConfig, s.Name))
			return true
		}
		return false
	})
	if len(ws) > 0 {
		if ok, why := a.trustWorkspace(ctx, root, hash, ws); ok {
			servers = append(servers, ws...)
		} else {
			notes = append(notes, fmt.Sprintf("The MCP servers of %s (%s) are not started: %s", mcp.WorkspaceFile, serverNames(ws), why))
		}
	}
	for _, n := range notes {
		a.notice("mcp-config", LevelWarning, n)
	}
	return servers, notes
}

// trustWorkspace asks the user, through the approver, whether to start
// the servers of the workspace's .mcp.json: they are commands that run on
// this machine. The answer is remembered for the workspace and these bytes
// of .mcp.json, yes (Allow) or no (Never), as VS Code remembers a
// workspace's trust; AllowSession starts them this time only, and Deny or
// no answer leaves them out this time and asks again next time. why says
// why they do not start.
func (a *Agent) trustWorkspace(ctx context.Context, root, hash string, ws []mcp.Server) (ok bool, why string) {
	const untrusted = "the workspace is not trusted to run them (asked again at the next start)"
	const declined = "you chose not to start this workspace's servers (asked again when " + mcp.WorkspaceFile + " changes; " +
		"or delete its entry in " + mcp.TrustFile + " in the state directory)"
	switch {
	case mcp.Trusted(a.stateDir, root, hash):
		return true, ""
	case mcp.Declined(a.stateDir, root, hash):
		return false, declined
	case a.opts.Approver == nil:
		return false, untrusted
	}
	var detail strings.Builder
	for _, s := range ws {
		fmt.Fprintf(&detail, "%s: %s\n", s.Name, s.Describe())
	}
	detail.WriteString("They run on this machine with your rights, as the workspace's " + mcp.WorkspaceFile + " says. " +
		"A yes or a never is remembered for this workspace until the file changes.")
	req := approval.Request{Tool: "mcp", Kind: mcp.KindTrust,
		Summary: fmt.Sprintf("start the MCP servers of this workspace's %s (%s)", mcp.WorkspaceFile, serverNames(ws)), Detail: detail.String()}
	switch a.opts.Approver.Approve(ctx, req) {
	case Allow:
		if err := mcp.Trust(a.stateDir, root, hash); err != nil {
			a.logf("reika: remembering the trust in %s: %v", mcp.WorkspaceFile, err)
		}
		return true, ""
	case AllowSession:
		return true, ""
	case Never:
		if err := mcp.Decline(a.stateDir, root, hash); err != nil {
			a.logf("reika: remembering the answer on %s: %v", mcp.WorkspaceFile, err)
		}
		return false, declined
	}
	return false, untrusted
}

func serverNames(ss []mcp.Server) string {
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}

// planMCP makes the agent's tools ours and the MCP tools that fit the
// budget of a window of window tokens, and reports the servers that offer
// none.
func (a *Agent) planMCP(window int) {
	a.mu.Lock()
	set := a.mcp.set
	a.mu.Unlock()
	ts := tools.All()
	reserved := make([]string, len(ts))
	for i, t := range ts {
		reserved[i] = t.Spec().Name
	}
	budget := MCPBudgetChars(window)
	admitted, reports := set.Plan(budget, reserved)
	for _, t := range admitted {
		ts = append(ts, set.AgentTool(t, a.mcpAllowed))
	}
	a.tools = ts
	var notes []string
	for _, r := range reports {
		if r.State == mcp.StateConnected {
			continue
		}
		msg := "MCP server " + r.Line()
		if r.State == mcp.StateLeftOut {
			msg += fmt.Sprintf(" (the MCP budget is %d%% of the window; a larger window makes room)", MCPBudgetPercent)
		}
		notes = append(notes, msg)
		a.notice("mcp:"+r.Name, LevelWarning, msg)
	}
	a.mu.Lock()
	a.mcp.reports = reports
	a.mcp.notes = append(a.mcp.notes, notes...)
	a.mu.Unlock()
}

// mcpDown reports a server that stopped: its tools stay in the prefix
// (their calls say it stopped) until the prefix changes anyway.
func (a *Agent) mcpDown(server, why string) {
	msg := fmt.Sprintf("MCP server %s stopped: %s", server, why)
	a.mu.Lock()
	for i := range a.mcp.reports {
		if a.mcp.reports[i].Name == server {
			a.mcp.reports[i].State, a.mcp.reports[i].Why = mcp.StateDown, why
		}
	}
	a.mcp.notes = append(a.mcp.notes, msg)
	a.mu.Unlock()
	a.notice("mcp:"+server, LevelWarning, msg)
}

// syncMCP readies a turn: it starts the servers when they are not yet (a
// resumed session), takes the tool lists that changed since the last turn,
// and makes the session's tool definitions the agent's — one change of
// the fixed prefix, logged and said in the transcript — then says what
// happened to the servers.
func (a *Agent) syncMCP(ctx context.Context, sess *session) {
	a.startMCP(ctx, sess.m.Gauge().Window())
	a.mu.Lock()
	set := a.mcp.set
	a.mu.Unlock()
	if set.Refresh(ctx) {
		a.planMCP(sess.m.Gauge().Window())
	}
	// The session's mode filters the tools as a mode switch does.
	ts := a.tools
	if mode, err := resolveMode(sess.root, sess.offer.mode); err == nil {
		ts = sessionTools(a.tools, sess.offer.skills, mode)
	}
	specs := tools.Specs(ts)
	a.mu.Lock()
	notes := a.mcp.notes
	a.mcp.notes = nil
	a.mu.Unlock()
	if !slices.EqualFunc(specs, sess.m.H.Tools, sameSpec) {
		sess.m.Setup().Tools(specs)
		sess.offer.tools = ts
		sess.offer.split = withToolParts(sess.offer.split, ts)
		sess.log.append(record{Kind: recTools, Tools: specs})
		notes = append(notes, fmt.Sprintf("The tool definitions changed (now %d tools, %d chars): the next request carries them, one change of the fixed prefix.",
			len(specs), ctxwin.ToolChars(specs)))
	}
	for _, n := range notes {
		sess.emit(Event{Kind: EventInfo, Text: n})
		sess.log.append(record{Kind: recInfo, Text: n})
	}
}

func sameSpec(x, y ctxwin.ToolSpec) bool {
	return x.Name == y.Name && x.Description == y.Description && string(x.Parameters) == string(y.Parameters)
}

// mcpAllowed reports whether the mcpAllow setting lets a call of the tool
// orig of server (named name in the request) run without asking: an entry
// names the server (SERVER or mcp__SERVER) or the tool (its name in the
// request, or mcp__SERVER__TOOL).
func (a *Agent) mcpAllowed(server, orig, name string) bool {
	for _, e := range a.settings().MCPAllow {
		switch e {
		case server, mcp.Prefix + server, name, mcp.Prefix + server + "__" + orig:
			return true
		}
	}
	return false
}

// mcpTooltipLocked is the status tooltip's lines on the MCP servers: one
// per server. a.mu is held.
func (a *Agent) mcpTooltipLocked() string {
	if len(a.mcp.reports) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nMCP servers:")
	for _, r := range a.mcp.reports {
		b.WriteString("\n  " + r.Line())
		if r.State == mcp.StateConnected {
			fmt.Fprintf(&b, " (~%d tokens)", r.Chars/4)
		}
	}
	return b.String()
}

// MCPReports is what became of each MCP server, for reika-lsp window.
func (a *Agent) MCPReports() []mcp.Report {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.mcp.reports)
}

// closeMCP stops the servers.
func (a *Agent) closeMCP() {
	a.mu.Lock()
	set := a.mcp.set
	a.mu.Unlock()
	if set != nil {
		set.Close()
	}
}
