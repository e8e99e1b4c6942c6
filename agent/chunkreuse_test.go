package agent

import (
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// TestDeletionShaped: which requests llama.cpp's chunk reuse can serve
// after their first difference — deletions and a new tail — and which it
// cannot (an insertion, a replacement in place).
func TestDeletionShaped(t *testing.T) {
	msg := func(role, content string) ctxwin.Message { return ctxwin.Message{Role: role, Content: content} }
	call := func(id string) ctxwin.Message {
		return ctxwin.Message{Role: ctxwin.RoleAssistant, Reasoning: "thinking about " + id, ToolCalls: []ctxwin.ToolCall{{ID: id, Name: "read", Arguments: `{"path":"` + id + `"}`}}}
	}
	result := func(id, text string) ctxwin.Message {
		return ctxwin.Message{Role: ctxwin.RoleTool, ToolCallID: id, Content: text}
	}
	sys, task := msg(ctxwin.RoleSystem, "system"), msg(ctxwin.RoleUser, "task")
	prev := []ctxwin.Message{sys, task,
		call("a"), result("a", "a.go lines 1-3 of 3\n1 package a\n2\n3 func A() {}\n"),
		call("b"), result("b", "b.go lines 1-2 of 2\n1 package b\n2 var B = 1\n"),
		call("c"), result("c", "c.go lines 1-1 of 1\n1 package c\n")}
	noReasoning := call("b")
	noReasoning.Reasoning = ""
	for _, tc := range []struct {
		name string
		next []ctxwin.Message
		d    int
		kept int // messages kept whole after d; -1: not deletion-shaped
	}{
		{"fold: rounds deleted, recap appended", []ctxwin.Message{sys, task, prev[6], prev[7], msg(ctxwin.RoleUser, "recap")}, 2, 1},
		{"shed: a body deleted, its header kept, notice appended",
			[]ctxwin.Message{sys, task, prev[2], result("a", "a.go lines 1-3 of 3"), prev[4], prev[5], prev[6], prev[7], msg(ctxwin.RoleUser, "shed")}, 3, 4},
		{"reasoning dropped", []ctxwin.Message{sys, task, prev[2], prev[3], noReasoning, prev[5], prev[6], prev[7]}, 4, 3},
		{"recap in place of the rounds", []ctxwin.Message{sys, task, msg(ctxwin.RoleUser, "recap"), prev[6], prev[7]}, 2, -1},
		{"summary in place of a result", []ctxwin.Message{sys, task, prev[2], result("a", "Read a.go: func A"), prev[4], prev[5]}, 3, -1},
		{"a message only changed", []ctxwin.Message{sys, task, prev[2], result("a", "a.go changed"), prev[4]}, 3, -1},
	} {
		kept, ok := deletionShaped(prev, tc.next, tc.d)
		if got := len(kept); !ok && tc.kept != -1 || ok && got != tc.kept {
			t.Errorf("%s: kept %d whole, deletion-shaped %v; want %d", tc.name, got, ok, tc.kept)
		}
	}
}

// TestReuseText: the debug line names the chunks reused beyond the common
// prefix, and says once that a deletion-shaped request that kept hundreds
// of tokens reused none of them although chunk reuse was asked for.
func TestReuseText(t *testing.T) {
	body := strings.Repeat("func F() { return }\n", 40) // about 200 tokens by the estimate
	prev := []ctxwin.Message{{Role: ctxwin.RoleSystem, Content: "system"}, {Role: ctxwin.RoleUser, Content: "task"},
		{Role: ctxwin.RoleAssistant, Content: "old round"}, {Role: ctxwin.RoleUser, Content: body},
		{Role: ctxwin.RoleAssistant, Content: "kept " + body}, {Role: ctxwin.RoleUser, Content: "kept too " + body}}
	next := append(append([]ctxwin.Message(nil), prev[:2]...), prev[4], prev[5], ctxwin.Message{Role: ctxwin.RoleUser, Content: "recap"})
	r := &run{h: &Agent{}, sess: &session{m: ctxwin.NewManager(ctxwin.NewHistory("system", nil), 0)}}
	resp := func(cached, reuse int) *llm.Response {
		return &llm.Response{Timings: &llm.Timings{CacheN: cached}, CacheReuse: reuse}
	}
	if s := r.reuseText(prev, next, 2, resp(600, 8)); !strings.Contains(s, "reused about") {
		t.Errorf("chunks reused: %q", s)
	}
	if s := r.reuseText(prev, next, 2, resp(600, 0)); s != "" {
		t.Errorf("no chunk reuse asked: %q", s)
	}
	for i := 1; i < reuseMissesToWarn; i++ {
		if s := r.reuseText(prev, next, 2, resp(5, 8)); s != "" {
			t.Errorf("nothing reused, %d in a row: %q", i, s)
		}
	}
	if s := r.reuseText(prev, next, 2, resp(5, 8)); !strings.Contains(s, "cannot shift") {
		t.Errorf("nothing reused, %d in a row: %q", reuseMissesToWarn, s)
	}
	if s := r.reuseText(prev, next, 2, resp(5, 8)); s != "" {
		t.Errorf("said twice: %q", s)
	}
	inPlace := append(append([]ctxwin.Message(nil), prev[:2]...), ctxwin.Message{Role: ctxwin.RoleUser, Content: "recap"}, prev[4], prev[5])
	r.h = &Agent{}
	if s := r.reuseText(prev, inPlace, 2, resp(5, 8)); s != "" {
		t.Errorf("an insertion reuses nothing anyway: %q", s)
	}
}
