package main

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/approval"
)

// The terminal asks the trust question with the editors' answers: yes and
// never are the remembered ones, and anything else (or no terminal) is
// not now.
func TestTTYTrustAnswers(t *testing.T) {
	req := approval.Request{Tool: "mcp", Kind: agent.KindMCPTrust, Summary: "start the MCP servers of this workspace's .mcp.json (ws)", Detail: "ws: a command"}
	for _, c := range []struct {
		in          string
		interactive bool
		want        agent.Decision
	}{
		{"y\n", true, agent.Allow}, {"yes\n", true, agent.Allow}, {"v\n", true, agent.Never}, {"never\n", true, agent.Never},
		{"\n", true, agent.Deny}, {"s\n", true, agent.Deny}, {"", true, agent.Deny}, {"y\n", false, agent.Deny},
	} {
		var errs bytes.Buffer
		a := &ttyApprover{t: &terminal{out: &bytes.Buffer{}, err: &errs}, in: bufio.NewReader(strings.NewReader(c.in)), interactive: c.interactive}
		if got := a.Approve(t.Context(), req); got != c.want {
			t.Errorf("%q (terminal %v): %v, want %v", c.in, c.interactive, got, c.want)
		}
		if c.interactive && !strings.Contains(errs.String(), "Start them? [y]es, [N]ot now, ne[v]er for this workspace") {
			t.Errorf("the question: %q", errs.String())
		}
	}
}
