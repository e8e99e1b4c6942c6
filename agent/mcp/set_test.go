package mcp

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/agent/approval"
	"github.com/reika-lsp/reika-lsp/agent/mcp/mcptest"
	"github.com/reika-lsp/reika-lsp/agent/tools"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// allowAll is an env whose approver allows everything and records what it
// was asked.
func allowAll(asked *[]approval.Request) *tools.Env {
	return &tools.Env{Approve: func(_ context.Context, r approval.Request) bool {
		*asked = append(*asked, r)
		return true
	}}
}

func byName(ts []*Tool) map[string]*Tool {
	m := map[string]*Tool{}
	for _, t := range ts {
		m[t.Spec.Name] = t
	}
	return m
}

func run(t *testing.T, s *Set, tool *Tool, env *tools.Env, args string) ctxwin.Result {
	t.Helper()
	res, err := s.AgentTool(tool, nil).Run(t.Context(), env, json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestStdioToolsAndCalls(t *testing.T) {
	s := startSet(t, Options{}, testServer("my server"))
	ts, reports := s.Plan(0, []string{"read", "bash"})
	if len(reports) != 1 || reports[0].State != StateConnected || reports[0].Tools != 5 {
		t.Fatalf("reports %+v", reports)
	}
	named := byName(ts)
	echo := named["mcp__my_server__echo"]
	if echo == nil || echo.Orig != "echo" || !strings.Contains(string(echo.Spec.Parameters), `"text"`) {
		t.Fatalf("no echo tool with its schema: %v", named)
	}
	var asked []approval.Request
	res := run(t, s, echo, allowAll(&asked), `{"text":"hello"}`)
	if res.IsError || res.Text != "echo: hello" {
		t.Fatalf("echo: %+v", res)
	}
	if len(asked) != 1 || asked[0].Kind != KindPrefix+"mcp__my_server__echo" || !strings.Contains(asked[0].Detail, `"hello"`) {
		t.Errorf("approval asked %+v", asked)
	}
	if !strings.Contains(res.Summary, "mcp__my_server__echo") {
		t.Errorf("the summary does not name the tool: %q", res.Summary)
	}
	img := run(t, s, named["mcp__my_server__image"], allowAll(&asked), `{}`)
	if img.Text != "a picture follows\n[image: image/png, 18 bytes, not shown]" {
		t.Errorf("image result %q", img.Text)
	}
	denied := run(t, s, echo, &tools.Env{Approve: func(context.Context, approval.Request) bool { return false }}, `{"text":"x"}`)
	if !denied.IsError || !strings.Contains(denied.Text, "denied") {
		t.Errorf("a denied call: %+v", denied)
	}
}

func TestAllowedRunsWithoutAsking(t *testing.T) {
	s := startSet(t, Options{}, testServer("srv"))
	ts, _ := s.Plan(0, nil)
	echo := byName(ts)["mcp__srv__echo"]
	env := &tools.Env{Approve: func(context.Context, approval.Request) bool { t.Error("asked"); return false }}
	res, _ := s.AgentTool(echo, func(server, orig, name string) bool { return server == "srv" }).Run(t.Context(), env, json.RawMessage(`{"text":"a"}`))
	if res.Text != "echo: a" {
		t.Errorf("%+v", res)
	}
}

func TestServersThatDoNotStart(t *testing.T) {
	s := startSet(t, Options{ConnectTimeout: time.Second},
		Server{Name: "missing", Type: TypeStdio, Command: "/nonexistent/mcp-server", From: FromWorkspace},
		testServer("fails", "MCPTEST_FAIL", "1"),
		testServer("hangs", "MCPTEST_HANG", "1"),
		testServer("fine"))
	ts, reports := s.Plan(0, nil)
	want := map[string]string{"missing": "no such file", "fails": "failing as asked", "hangs": "no answer within 1s"}
	for _, r := range reports {
		if r.Name == "fine" {
			if r.State != StateConnected {
				t.Errorf("fine: %+v", r)
			}
			continue
		}
		if r.State != StateFailed || !strings.Contains(r.Why, want[r.Name]) {
			t.Errorf("%s: %s, want failed with %q", r.Name, r.Line(), want[r.Name])
		}
	}
	if len(ts) != 5 {
		t.Errorf("%d tools, want the 5 of the server that started", len(ts))
	}
}

func TestCallTimeoutAndCancel(t *testing.T) {
	s := startSet(t, Options{CallTimeout: 300 * time.Millisecond}, testServer("srv"))
	ts, _ := s.Plan(0, nil)
	slow := byName(ts)["mcp__srv__slow"]
	var asked []approval.Request
	res := run(t, s, slow, allowAll(&asked), `{}`)
	if !res.IsError || !strings.Contains(res.Text, "gave no answer within 300ms") {
		t.Errorf("timed out call: %+v", res)
	}
	ctx, cancel := context.WithCancel(t.Context())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	s.opts.CallTimeout = time.Hour
	r2, _ := s.AgentTool(slow, nil).Run(ctx, allowAll(&asked), json.RawMessage(`{}`))
	if !r2.IsError || !strings.Contains(r2.Text, "cancelled") {
		t.Errorf("cancelled call: %+v", r2)
	}
	// The server still answers after both.
	if res := run(t, s, byName(ts)["mcp__srv__echo"], allowAll(&asked), `{"text":"still"}`); res.Text != "echo: still" {
		t.Errorf("after the timeout: %+v", res)
	}
}

func TestServerThatDies(t *testing.T) {
	var mu sync.Mutex
	down := make(chan string, 1)
	s := startSet(t, Options{OnDown: func(server, why string) {
		mu.Lock()
		defer mu.Unlock()
		down <- server + ": " + why
	}}, testServer("srv"))
	ts, _ := s.Plan(0, nil)
	var asked []approval.Request
	res := run(t, s, byName(ts)["mcp__srv__exit"], allowAll(&asked), `{}`)
	if !res.IsError {
		t.Errorf("the call that killed the server: %+v", res)
	}
	select {
	case msg := <-down:
		if !strings.HasPrefix(msg, "srv: its connection ended") {
			t.Errorf("down: %q", msg)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the server's end was never reported")
	}
	res = run(t, s, byName(ts)["mcp__srv__echo"], allowAll(&asked), `{"text":"x"}`)
	if !res.IsError || !strings.Contains(res.Text, "not running") {
		t.Errorf("a call after it died: %+v", res)
	}
	if _, reports := s.Plan(0, nil); reports[0].State != StateDown {
		t.Errorf("report %+v", reports[0])
	}
}

func TestListChangedTakenOnRefresh(t *testing.T) {
	s := startSet(t, Options{}, testServer("srv"))
	ts, _ := s.Plan(0, nil)
	if s.Refresh(t.Context()) {
		t.Error("Refresh changed tools nobody changed")
	}
	var asked []approval.Request
	run(t, s, byName(ts)["mcp__srv__add"], allowAll(&asked), `{}`)
	// The notification comes on its own: wait for it.
	changed := false
	for i := 0; i < 300 && !changed; i++ {
		changed = s.Refresh(t.Context())
		if !changed {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if !changed {
		t.Fatal("the tools never changed")
	}
	ts, _ = s.Plan(0, nil)
	if byName(ts)["mcp__srv__extra"] == nil {
		t.Errorf("no extra tool after the change: %v", byName(ts))
	}
}

func TestHTTPServerWithHeaders(t *testing.T) {
	hs := httptest.NewServer(mcptest.Handler("Authorization: Bearer sesame"))
	t.Cleanup(hs.Close) // after the set closes its stream
	getenv := func(k string) (string, bool) {
		if k == "TOKEN" {
			return "sesame", true
		}
		return "", false
	}
	var servers []Server
	for _, hdr := range []string{"Bearer ${TOKEN}", "Bearer wrong"} {
		srv, err := fromEntry("web", entry{Type: "http", URL: hs.URL, Headers: map[string]string{"Authorization": hdr}}, getenv)
		if err != nil {
			t.Fatal(err)
		}
		servers = append(servers, srv)
	}
	servers[1].Name = "refused"
	s := startSet(t, Options{ConnectTimeout: 10 * time.Second}, servers...)
	ts, reports := s.Plan(0, nil)
	if reports[0].State != StateConnected || reports[1].State != StateFailed {
		t.Fatalf("reports: %+v", reports)
	}
	var asked []approval.Request
	if res := run(t, s, byName(ts)["mcp__web__echo"], allowAll(&asked), `{"text":"over http"}`); res.Text != "echo: over http" {
		t.Errorf("%+v", res)
	}
}

func TestBudgetLeavesOutWholeServers(t *testing.T) {
	s := startSet(t, Options{}, testServer("a"), testServer("b"))
	_, all := s.Plan(0, nil)
	one := all[0].Chars
	ts, reports := s.Plan(one+one/2, nil)
	if reports[0].State != StateConnected || reports[1].State != StateLeftOut || len(ts) != 5 {
		t.Fatalf("%d tools, reports %+v", len(ts), reports)
	}
	if !strings.Contains(reports[1].Line(), "left out: its tool definitions take") {
		t.Errorf("line %q", reports[1].Line())
	}
}
