package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// fakeEnv prices a message at a tenth of its bytes plus 4, and answers
// summary calls with a fixed text, refusing those above the window.
type fakeEnv struct {
	window    int
	summaries [][]ctxwin.Message
	tools     []bool
	lengths   []int
}

func (e *fakeEnv) Window() int { return e.window }
func (e *fakeEnv) System() ctxwin.Message {
	return ctxwin.Message{Role: ctxwin.RoleSystem, Content: "system"}
}
func (e *fakeEnv) MessageTokens(m ctxwin.Message) int {
	return (len(m.Content)+len(m.Reasoning))/10 + 4
}
func (e *fakeEnv) Tokens(msgs []ctxwin.Message) int {
	n := e.MessageTokens(e.System())
	for _, m := range msgs {
		n += e.MessageTokens(m)
	}
	return n
}
func (e *fakeEnv) Summarize(msgs []ctxwin.Message, tools bool, length int) (string, error) {
	n := 0
	for _, m := range msgs {
		n += e.MessageTokens(m)
	}
	if n >= e.window {
		return "", &llm.OverflowError{PromptTokens: n, Window: e.window}
	}
	e.summaries = append(e.summaries, msgs)
	e.tools = append(e.tools, tools)
	e.lengths = append(e.lengths, length)
	return "SUMMARY", nil
}

// round is a reply calling one tool and its result of about size bytes.
func round(id string, size int) []ctxwin.Message {
	return []ctxwin.Message{
		{Role: ctxwin.RoleAssistant, Content: "next " + id, ToolCalls: []ctxwin.ToolCall{{ID: id, Name: "read", Arguments: `{"path":"a.go"}`}}},
		{Role: ctxwin.RoleTool, ToolCallID: id, Content: id + ":" + strings.Repeat("x", size)},
	}
}

// pairsOK reports whether every tool result answers a call of the reply
// before it, and every call is answered, as the engine requires.
func pairsOK(msgs []ctxwin.Message) error {
	pending := map[string]bool{}
	for i, m := range msgs {
		if m.Role == ctxwin.RoleTool {
			if !pending[m.ToolCallID] {
				return fmt.Errorf("message %d: result %s answers no pending call", i, m.ToolCallID)
			}
			delete(pending, m.ToolCallID)
			continue
		}
		if len(pending) > 0 {
			return fmt.Errorf("message %d: calls left unanswered", i)
		}
		for _, c := range m.ToolCalls {
			pending[c.ID] = true
		}
	}
	if len(pending) > 0 {
		return fmt.Errorf("calls left unanswered at the end")
	}
	return nil
}

func TestMaskKeepsTheLastTenOutputsVerbatim(t *testing.T) {
	msgs := []ctxwin.Message{{Role: ctxwin.RoleUser, Content: "task"}}
	for i := range 25 {
		msgs = append(msgs, round(fmt.Sprintf("c%d", i), 100+i)...)
	}
	p := &maskPolicy{Keep: 10}
	p.Add(msgs...)
	got, err := p.Next(&fakeEnv{window: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(msgs) {
		t.Fatalf("%d messages, want %d", len(got), len(msgs))
	}
	verbatim, masked := 0, 0
	for i, m := range got {
		switch {
		case m.Role != ctxwin.RoleTool:
			if !m.Equal(msgs[i]) {
				t.Errorf("message %d (%s) changed; masking keeps reasoning and actions", i, m.Role)
			}
		case m.Content == msgs[i].Content:
			verbatim++
			if i < len(msgs)-20 {
				t.Errorf("result %s is verbatim but older than the last 10", m.ToolCallID)
			}
		default:
			masked++
			want := "Old environment output: (1 lines omitted)"
			if m.Content != want {
				t.Errorf("masked result %s reads %q, want %q", m.ToolCallID, m.Content, want)
			}
		}
	}
	if verbatim != 10 || masked != 15 {
		t.Errorf("%d verbatim, %d masked; want 10 and 15", verbatim, masked)
	}
	if err := pairsOK(got); err != nil {
		t.Error(err)
	}
	// The history itself is untouched: masking is a view.
	if p.h[2].Content != msgs[2].Content {
		t.Error("masking changed the conversation")
	}
	// Counting lines: a three-line output masked says so.
	m := maskObservations([]ctxwin.Message{{Role: ctxwin.RoleTool, Content: "a\nb\nc"}}, 0)
	if m[0].Content != "Old environment output: (3 lines omitted)" {
		t.Errorf("got %q", m[0].Content)
	}
}

func TestSummarizeFiresAt83Percent(t *testing.T) {
	p := &summarizePolicy{Threshold: 0.83, KeepLast: 4}
	for _, c := range []struct {
		tokens, window int
		want           bool
	}{{8299, 10000, false}, {8300, 10000, false}, {8301, 10000, true}, {13599, 16384, true}, {13598, 16384, false}, {108_000, 131072, false}, {109_000, 131072, true}} {
		if got := p.Triggered(c.tokens, c.window); got != c.want {
			t.Errorf("Triggered(%d, %d) = %v, want %v", c.tokens, c.window, got, c.want)
		}
	}

	// A conversation of 10-token rounds in a 1000-token window: the
	// policy sends everything, append-only, until the request would pass
	// 830 tokens, then makes one summary call and keeps the last messages.
	env := &fakeEnv{window: 1000}
	p = &summarizePolicy{Threshold: 0.83, KeepLast: 4}
	p.Add(ctxwin.Message{Role: ctxwin.RoleUser, Content: "task"})
	var prev []ctxwin.Message
	for i := 0; len(env.summaries) == 0; i++ {
		if i > 200 {
			t.Fatal("never summarized")
		}
		p.Add(round(fmt.Sprintf("c%d", i), 300)...)
		before := env.Tokens(p.view())
		got, err := p.Next(env)
		if err != nil {
			t.Fatal(err)
		}
		if len(env.summaries) == 0 {
			if before > 830 {
				t.Fatalf("a request of %d tokens went out unsummarized", before)
			}
			if d := ctxwin.Diverge(prev, got); !d.Append {
				t.Fatalf("request %d is not an append of the previous one", i)
			}
			prev = got
			continue
		}
		if before <= 830 {
			t.Fatalf("summarized at %d tokens, below 83%%", before)
		}
		// The summary call is the request that would have been sent plus
		// the summary prompt, with the tools: it reuses the cached prefix.
		sum := env.summaries[0]
		if sum[0].Role != ctxwin.RoleSystem || sum[len(sum)-1].Content != summarizePrompt || !env.tools[0] {
			t.Error("the summary call is not the request plus the summary prompt, with tools")
		}
		if d := ctxwin.Diverge(append([]ctxwin.Message{env.System()}, prev...), sum); !d.Append {
			t.Error("the summary call does not extend the previous request")
		}
		// What is sent next: the summary, then the last messages.
		if !strings.HasPrefix(got[0].Content, continuationPrefix) || !strings.HasSuffix(got[0].Content, "SUMMARY") {
			t.Errorf("the request does not open with the summary: %.80q", got[0].Content)
		}
		tail := got[1:]
		if len(tail) < 4 || len(tail) > 5 {
			t.Errorf("%d messages kept after the summary, want the last 4 (5 with their reply)", len(tail))
		}
		for k, m := range tail {
			if !m.Equal(p.h[len(p.h)-len(tail)+k]) {
				t.Errorf("kept message %d is not verbatim", k)
			}
		}
		if err := pairsOK(got); err != nil {
			t.Error(err)
		}
		if env.Tokens(got) > 500 {
			t.Errorf("after the summary the request still holds %d tokens", env.Tokens(got))
		}
	}
	if n := len(env.summaries); n != 1 {
		t.Errorf("%d summary calls, want 1", n)
	}
}

func TestSummaryLength(t *testing.T) {
	for _, c := range []struct{ replaced, window, want int }{
		{1000, 131072, 600}, {20000, 131072, 2000}, {100000, 131072, 3000}, {100000, 16384, 2048},
	} {
		if got := summaryLength(c.replaced, c.window); got != c.want {
			t.Errorf("summaryLength(%d, %d) = %d, want %d", c.replaced, c.window, got, c.want)
		}
	}
}

func TestDropHalfKeepsTheFirstPair(t *testing.T) {
	for _, c := range []struct{ window, want int }{{64_000, 37_000}, {128_000, 98_000}, {200_000, 160_000}, {16384, 13107}, {131072, 104857}} {
		if got := maxAllowed(c.window); got != c.want {
			t.Errorf("maxAllowed(%d) = %d, want %d", c.window, got, c.want)
		}
	}
	env := &fakeEnv{window: 16384}
	p := &dropHalfPolicy{}
	p.Add(ctxwin.Message{Role: ctxwin.RoleUser, Content: "the first task"})
	for i := range 40 {
		p.Add(round(fmt.Sprintf("c%d", i), 50)...)
	}
	first := append([]ctxwin.Message(nil), p.h[:3]...)
	// Below maxAllowed nothing is dropped.
	p.Served(13000, 100)
	got, _ := p.Next(env)
	if len(got) != len(p.h) {
		t.Fatalf("dropped below maxAllowed: %d of %d messages", len(got), len(p.h))
	}
	// At maxAllowed, half of what follows the first pair goes.
	p.Served(13000, 107)
	got, _ = p.Next(env)
	rest := len(p.h) - 3
	if want := 3 + rest - rest/4*2; len(got) != want {
		t.Errorf("%d messages after dropping half, want %d", len(got), want)
	}
	if got[0].Content != first[0].Content || got[1].ToolCalls[0].ID != first[1].ToolCalls[0].ID || got[2].Content != first[2].Content {
		t.Error("the first pair was not kept")
	}
	if !strings.HasSuffix(got[1].Content, truncationNote) {
		t.Error("no truncation note on the first reply")
	}
	if err := pairsOK(got); err != nil {
		t.Error(err)
	}
	if !got[len(got)-1].Equal(p.h[len(p.h)-1]) {
		t.Error("the newest message was dropped")
	}
	// The drop is remembered: the next request appends to this one.
	p.Add(round("d0", 50)...)
	next, _ := p.Next(env)
	if d := ctxwin.Diverge(got, next); !d.Append {
		t.Errorf("the request after a truncation is not an append (diverges at %d)", d.Index)
	}
	// Far past maxAllowed (half the tokens still over it), three quarters go.
	before := len(next)
	p.Served(30000, 0)
	got, _ = p.Next(env)
	rest = before - 3
	if want := 3 + rest - rest*3/4/2*2; len(got) != want {
		t.Errorf("%d messages after dropping three quarters of %d, want %d", len(got), before, want)
	}
	// A refused request drops three quarters and retries.
	retry, err := p.Refused(env, got)
	if err != nil || retry == nil || len(retry) >= len(got) {
		t.Errorf("a refusal did not shrink the request: %d → %d messages (%v)", len(got), len(retry), err)
	}
	if err := pairsOK(retry); err != nil {
		t.Error(err)
	}
}

func TestPruneProtectsTheNewest40k(t *testing.T) {
	// Outputs of 4000 bytes, 1000 tokens by opencode's estimate; four
	// turns of 25 rounds.
	build := func(turns, rounds int) *prunePolicy {
		p := &prunePolicy{OutputLimit: 4096}
		for tu := range turns {
			p.Add(ctxwin.Message{Role: ctxwin.RoleUser, Content: fmt.Sprintf("task %d", tu)})
			for r := range rounds {
				p.Add(round(fmt.Sprintf("c%d_%d", tu, r), 4000-4)...)
			}
		}
		return p
	}
	p := build(4, 25)
	p.prune()
	msgs := p.messages()
	if err := pairsOK(msgs); err != nil {
		t.Fatal(err)
	}
	// The last two turns (50 outputs) are protected outright; 40 more
	// outputs (40k tokens) are protected by PRUNE_PROTECT; the 10 oldest
	// (10k tokens) would be pruned, but 10k is under PRUNE_MINIMUM.
	if n := countPruned(msgs); n != 0 {
		t.Errorf("%d outputs pruned, want none: freeing 10k is under the 20k minimum", n)
	}
	p = build(5, 25)
	p.prune()
	msgs = p.messages()
	// Five turns: 50 protected by turn, 41 by tokens (the 41st crosses 40k
	// and is the first pruned), 34 older: 35 outputs, 35k tokens, pruned.
	if n := countPruned(msgs); n != 35 {
		t.Errorf("%d outputs pruned, want 35", n)
	}
	for i, m := range msgs {
		if m.Content == prunedText && i > len(msgs)/2 {
			t.Errorf("message %d of %d pruned: too new", i, len(msgs))
		}
	}
	// A new turn moves the protection back by a turn: turns 4 and 5 are
	// protected, turn 3 and 15 outputs of turn 2 by tokens; the walk then
	// clears turn 2's 10 oldest and turn 1's 15 newest, and stops at turn
	// 1's outputs already cleared.
	before := countPruned(p.messages())
	p.Add(ctxwin.Message{Role: ctxwin.RoleUser, Content: "task 5"})
	p.Add(round("e", 4000-4)...)
	p.prune()
	msgs = p.messages()
	if after := countPruned(msgs); after-before != 25 {
		t.Errorf("a second prune cleared %d more outputs, want 25", after-before)
	}
	want := map[string]bool{"c2_9": true, "c2_10": false, "c1_10": true, "c3_0": false}
	for _, m := range msgs {
		if w, ok := want[m.ToolCallID]; ok && m.Role == ctxwin.RoleTool && (m.Content == prunedText) != w {
			t.Errorf("output %s: pruned %v, want %v", m.ToolCallID, !w, w)
		}
	}
}

func countPruned(msgs []ctxwin.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == ctxwin.RoleTool && m.Content == prunedText {
			n++
		}
	}
	return n
}

func TestPruneCompactsOnOverflow(t *testing.T) {
	p := &prunePolicy{OutputLimit: 4096}
	if got := p.Usable(16384); got != 8192 {
		t.Errorf("usable of a 16k window = %d, want 8192", got)
	}
	env := &fakeEnv{window: 16384}
	p.Add(ctxwin.Message{Role: ctxwin.RoleUser, Content: "task"})
	for i := range 60 {
		p.Add(round(fmt.Sprintf("c%d", i), 1000)...)
	}
	// The last response stayed below usable: no compaction.
	p.Served(8000, 100)
	got, _ := p.Next(env)
	if len(env.summaries) != 0 || len(got) != 121 {
		t.Fatalf("compacted below usable (%d summary calls, %d messages)", len(env.summaries), len(got))
	}
	// It passed usable: the next step compacts in a fresh request with no
	// system message and no tools, the transcript flattened.
	p.Served(8100, 100)
	got, _ = p.Next(env)
	if len(env.summaries) != 1 {
		t.Fatalf("%d summary calls, want 1", len(env.summaries))
	}
	sum := env.summaries[0]
	if len(sum) != 1 || sum[0].Role != ctxwin.RoleUser || env.tools[0] || !strings.Contains(sum[0].Content, "[Tool result]: c0:") {
		t.Errorf("the summary call is not a flattened transcript without tools: %d messages, tools %v", len(sum), env.tools[0])
	}
	if got[0].Content != compactMarker || got[1].Content != "SUMMARY" || got[len(got)-1].Content != continueText {
		t.Errorf("the view after compaction is not marker, summary, tail, continue")
	}
	kept := 0
	for _, m := range got[2 : len(got)-1] {
		kept += env.MessageTokens(m)
	}
	if kept > 2048 || kept == 0 {
		t.Errorf("the verbatim tail holds %d tokens, want up to clamp(usable/4, 2k, 15k) = 2048", kept)
	}
	if err := pairsOK(got); err != nil {
		t.Error(err)
	}
	// Until the next step is served, it does not compact again.
	again, _ := p.Next(env)
	if len(env.summaries) != 1 || len(again) != len(got) {
		t.Error("compacted twice without a step in between")
	}
}

func TestNewestRoundIsKept(t *testing.T) {
	// A newest result larger than the tail budget stays: the request
	// after a compaction always carries the step it answers.
	p := &prunePolicy{OutputLimit: 4096}
	env := &fakeEnv{window: 16384}
	p.Add(ctxwin.Message{Role: ctxwin.RoleUser, Content: "task"})
	for i := range 20 {
		p.Add(round(fmt.Sprintf("c%d", i), 1000)...)
	}
	p.Add(round("big", 60000)...)
	got, err := p.Refused(env, nil)
	if err != nil || got == nil {
		t.Fatalf("no compaction on a refusal: %v", err)
	}
	if got[len(got)-2].ToolCallID != "big" {
		t.Errorf("the newest result was summarized away")
	}
	if err := pairsOK(got); err != nil {
		t.Error(err)
	}
}
