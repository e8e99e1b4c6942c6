package lsp

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/engine"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/agent/mcp/mcptest"
	"github.com/reika-lsp/reika-lsp/lsp/lsptest"
)

// mcpWorkspace is a workspace whose .mcp.json names a streamable HTTP MCP
// server (the test server, in process), served by real agents with their
// state in one directory; every request's tool names are recorded.
type mcpWorkspace struct {
	t     *testing.T
	root  string
	state string
	url   string

	mu      sync.Mutex
	offered [][]string
	asked   []protocolQuestion
}

type protocolQuestion struct {
	Type    int    `json:"type"`
	Message string `json:"message"`
	Actions []struct {
		Title string `json:"title"`
	} `json:"actions"`
}

func newMCPWorkspace(t *testing.T) *mcpWorkspace {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	web := httptest.NewServer(mcptest.Handler(""))
	t.Cleanup(web.Close)
	w := &mcpWorkspace{t: t, root: t.TempDir(), state: t.TempDir(), url: web.URL}
	if real, err := filepath.EvalSymlinks(w.root); err == nil {
		w.root = real
	}
	w.writeMCP("")
	return w
}

// writeMCP writes .mcp.json; extra changes its bytes.
func (w *mcpWorkspace) writeMCP(extra string) {
	body := fmt.Sprintf(`{"mcpServers": {"web": {"type": "http", "url": %q%s}}}`, w.url, extra)
	if err := os.WriteFile(filepath.Join(w.root, ".mcp.json"), []byte(body), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// server starts a server on the workspace whose client answers the trust
// question with answer.
func (w *mcpWorkspace) server(answer string) *harness {
	hooks := lsptest.Hooks{ShowMessageRequest: func(params json.RawMessage) (any, error) {
		var q protocolQuestion
		json.Unmarshal(params, &q)
		w.mu.Lock()
		w.asked = append(w.asked, q)
		w.mu.Unlock()
		return map[string]string{"title": answer}, nil
	}}
	h := start(w.t, harnessOptions{hooks: hooks, newAgent: func(opts agent.Options) (agent.Service, error) {
		srv := enginetest.New(enginetest.Options{Window: 16000, Script: func(r *enginetest.Request) enginetest.Reply {
			w.mu.Lock()
			w.offered = append(w.offered, slices.Clone(r.Tools))
			w.mu.Unlock()
			return enginetest.Text("ok")
		}})
		w.t.Cleanup(srv.Close)
		model, err := engine.New(engine.Config{BaseURL: srv.URL(), CacheDir: w.t.TempDir()})
		if err != nil {
			return nil, err
		}
		opts.Model, opts.StateDir = model, w.state
		return agent.New(opts)
	}})
	h.root = w.root
	h.initialize(nil, nil)
	return h
}

// turn asks once and returns how often the client was asked to trust the
// workspace so far and the tools of the last request.
func (w *mcpWorkspace) turn(h *harness, prompt string) (asked int, tools []string) {
	w.t.Helper()
	var res agent.AskResult
	h.mustCommand(CmdAsk, []any{map[string]any{"prompt": prompt}}, &res)
	if res.Status != agent.AskDone {
		w.t.Fatalf("ask %q: %+v", prompt, res)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.asked), w.offered[len(w.offered)-1]
}

func hasWeb(tools []string) bool { return slices.Contains(tools, "mcp__web__echo") }

// The trust question of a workspace's .mcp.json through the server: asked
// with window/showMessageRequest and its own actions before the servers
// start; Not now starts nothing and asks again at the next start, Start
// servers starts them (an HTTP server here) and is remembered; a changed
// file asks again, and Never is remembered too.
func TestServerMCPTrust(t *testing.T) {
	w := newMCPWorkspace(t)

	h := w.server(ActionNotNow)
	if asked, tools := w.turn(h, "hi"); asked != 1 || hasWeb(tools) {
		t.Fatalf("not now: asked %d times, tools %v", asked, tools)
	}
	q := w.asked[0]
	titles := []string{}
	for _, a := range q.Actions {
		titles = append(titles, a.Title)
	}
	if !slices.Equal(titles, []string{ActionStartServers, ActionNotNow, ActionNever}) || q.Type != 2 ||
		!strings.Contains(q.Message, "start the MCP servers of this workspace's .mcp.json (web)") || !strings.Contains(q.Message, w.url) {
		t.Errorf("the question: %+v", q)
	}
	h.shutdownExit(true)

	h = w.server(ActionStartServers)
	if asked, tools := w.turn(h, "hi"); asked != 2 || !hasWeb(tools) {
		t.Fatalf("start servers: asked %d times in all, tools %v", asked, tools)
	}
	var st agent.Status
	h.mustCommand(CmdStatus, nil, &st)
	if !strings.Contains(st.Tooltip, "MCP servers:\n  web (workspace): 5 tools") || !strings.Contains(st.Tooltip, " · MCP web ~") {
		t.Errorf("the tooltip does not show the server and its part of the prefix:\n%s", st.Tooltip)
	}
	h.shutdownExit(true)

	h = w.server(ActionNever)
	if asked, tools := w.turn(h, "hi"); asked != 2 || !hasWeb(tools) {
		t.Fatalf("remembered start: asked %d times in all, tools %v", asked, tools)
	}
	h.shutdownExit(true)

	w.writeMCP(`, "headers": {"X-Changed": "1"}`)
	h = w.server(ActionNever)
	if asked, tools := w.turn(h, "hi"); asked != 3 || hasWeb(tools) {
		t.Fatalf("never after a change: asked %d times in all, tools %v", asked, tools)
	}
	h.shutdownExit(true)

	h = w.server(ActionStartServers)
	if asked, tools := w.turn(h, "hi"); asked != 3 || hasWeb(tools) {
		t.Fatalf("remembered never: asked %d times in all, tools %v", asked, tools)
	}
	h.shutdownExit(true)
}

// Plan mode with an MCP server connected offers none of its tools; a
// custom mode that names one offers it. A server that does not exist is
// reported (the transcript, the tooltip) and the session goes on.
func TestServerPlanModeWithMCP(t *testing.T) {
	w := newMCPWorkspace(t)
	writeUnder(t, w.root, ".mcp.json", fmt.Sprintf(`{"mcpServers": {"web": {"type": "http", "url": %q}, "gone": {"command": "/nonexistent/mcp-server"}}}`, w.url))
	writeUnder(t, w.root, ".reika/modes/lookup.md", "---\ndescription: read and ask the web server\ntools: read, mcp__web__echo\n---\nLook things up.\n")
	h := w.server(ActionStartServers)
	if _, tools := w.turn(h, "hi"); !hasWeb(tools) {
		t.Fatalf("code mode does not offer the server's tools: %v", tools)
	}
	var st agent.Status
	h.mustCommand(CmdStatus, nil, &st)
	if !strings.Contains(st.Tooltip, "gone (workspace): failed: ") || !strings.Contains(st.Tooltip, "/nonexistent/mcp-server") {
		t.Errorf("the tooltip does not report the missing server:\n%s", st.Tooltip)
	}
	said := false
	for _, m := range h.c.Notes(MethodTranscript) {
		ev := decode[agent.Event](t, m.Params)
		said = said || ev.Kind == agent.EventInfo && strings.Contains(ev.Text, "MCP server gone (workspace): failed")
	}
	if !said {
		t.Error("the transcript does not report the missing server")
	}
	w.turn(h, "/mode plan")
	_, tools := w.turn(h, "make a plan")
	if slices.ContainsFunc(tools, func(n string) bool { return strings.HasPrefix(n, "mcp__") }) || !slices.Contains(tools, "read") {
		t.Errorf("plan mode offers %v", tools)
	}
	w.turn(h, "/mode lookup")
	if _, tools := w.turn(h, "look it up"); !slices.Equal(tools, []string{"read", "mcp__web__echo"}) {
		t.Errorf("the custom mode offers %v", tools)
	}
	h.shutdownExit(true)
}
