package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// engineTally is what the fake engine says its answered requests cost.
func engineTally(r resumer) agent.PromptTally {
	var t agent.PromptTally
	for _, rec := range r.srv.Requests() {
		if rec.Status == 200 && strings.HasSuffix(rec.Path, "/chat/completions") {
			t.Processed += rec.PromptN
			t.Reused += rec.CacheN
			t.Requests++
		}
	}
	return t
}

// TestPromptTallyCountsAndResumes: the session's tally is the sum of the
// engine's timings over every request the session made (note rounds
// included), the status tooltip shows it, and a resumed session goes on
// counting from what its log saved.
func TestPromptTallyCountsAndResumes(t *testing.T) {
	r, _ := scriptedSession(t)
	want := engineTally(r)
	if want.Requests < 10 || want.Reused == 0 {
		t.Fatalf("the scripted session made %+v", want)
	}
	a := r.start()
	got := a.PromptTally()
	if got != want {
		t.Errorf("resumed tally %+v, the engine counted %+v", got, want)
	}
	if res := a.Ask(context.Background(), agent.AskParams{Prompt: "RESUME one"}); res.Status != agent.AskDone {
		t.Fatalf("resumed turn: %+v", res)
	}
	want = engineTally(r)
	if got := a.PromptTally(); got != want {
		t.Errorf("after a resumed turn: %+v, the engine counted %+v", got, want)
	}
	tip := a.Status().Tooltip
	line := "Prompt tokens this session: " + ctxwin.FormatTokens(want.Processed) + " processed, " + ctxwin.FormatTokens(want.Reused) + " reused from the engine's cache ("
	if !strings.Contains(tip, line) {
		t.Errorf("tooltip lacks %q:\n%s", line, tip)
	}
	a.Close()
}

// TestPromptTallyLine: what each engine's report adds, and the line.
func TestPromptTallyLine(t *testing.T) {
	var tl agent.PromptTally
	if tl.String() != "" {
		t.Errorf("empty tally says %q", tl.String())
	}
	tl.Add(&llm.Response{Timings: &llm.Timings{PromptN: 1500, CacheN: 8500}, Usage: &llm.Usage{PromptTokens: 10000}})
	tl.Add(&llm.Response{Usage: &llm.Usage{PromptTokens: 2000, CachedTokens: 1500, CachedKnown: true}})
	tl.Add(&llm.Response{Usage: &llm.Usage{PromptTokens: 700}})
	tl.Add(&llm.Response{}) // no usage: unknown, not zero
	want := agent.PromptTally{Processed: 1500 + 500 + 700, Reused: 8500 + 1500, Requests: 3, Unreported: 1}
	if tl != want {
		t.Errorf("tally %+v, want %+v", tl, want)
	}
	if s := tl.String(); s != "Prompt tokens this session: 2.7k processed, 10k reused from the engine's cache (78%); 1 of 3 requests reported no cache" {
		t.Errorf("line %q", s)
	}
}
