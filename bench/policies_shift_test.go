package main

import (
	"fmt"
	"testing"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

func TestShiftDropsTheOldestAt80To60(t *testing.T) {
	env := &fakeEnv{window: 1000}
	p := &shiftPolicy{Trigger: 0.8, Target: 0.6}
	p.Add(ctxwin.Message{Role: ctxwin.RoleUser, Content: "task"})
	var prev []ctxwin.Message
	shifts := 0
	for i := range 120 {
		p.Add(round(fmt.Sprintf("c%d", i), 300)...)
		all := p.h[p.from:]
		before := env.Tokens(all)
		got, err := p.Next(env)
		if err != nil {
			t.Fatal(err)
		}
		if err := pairsOK(got); err != nil {
			t.Fatal(err)
		}
		n := env.Tokens(got)
		if before <= 800 {
			// Below the trigger: everything since the last shift, appended.
			if len(got) != len(all) || prev != nil && !ctxwin.Diverge(prev, got).Append {
				t.Fatalf("request %d: shifted at %d tokens, below 80%%", i, before)
			}
		} else {
			shifts++
			// Shifted: the newest messages, down to 60% and no further
			// than a round below it; nothing added, no summary.
			if n > 600 || n < 600-2*(300/10+4+10) {
				t.Errorf("request %d: shifted from %d to %d tokens, want at most 600 and about that", i, before, n)
			}
			last := p.h[len(p.h)-len(got):]
			for k := range got {
				if !got[k].Equal(last[k]) {
					t.Fatalf("request %d: message %d is not the history's", i, k)
				}
			}
		}
		prev = got
	}
	if shifts < 3 || len(env.summaries) != 0 {
		t.Errorf("%d shifts and %d summary calls in 120 rounds; want several shifts and no summary", shifts, len(env.summaries))
	}

	// A newest round larger than the window: a refusal shifts everything
	// older out, and gives up when only the newest round is left.
	p = &shiftPolicy{Trigger: 0.8, Target: 0.6}
	p.Add(ctxwin.Message{Role: ctxwin.RoleUser, Content: "task"})
	p.Add(round("a", 300)...)
	p.Add(round("b", 20000)...)
	got, _ := p.Next(env)
	if len(got) != 2 || got[1].ToolCallID != "b" {
		t.Fatalf("the shift kept %d messages, want the newest round only", len(got))
	}
	if retry, _ := p.Refused(env, got); retry != nil {
		t.Errorf("a refusal with only the newest round left retried %d messages", len(retry))
	}
}

func TestMicrocompactClearsAllButTheLastFive(t *testing.T) {
	env := &fakeEnv{window: 4000}
	p := &summarizePolicy{Threshold: 0.83, KeepLast: 4, Mask: 5}
	p.Add(ctxwin.Message{Role: ctxwin.RoleUser, Content: "task"})
	for i := range 400 {
		p.Add(round(fmt.Sprintf("c%d", i), 300)...)
		got, err := p.Next(env)
		if err != nil {
			t.Fatal(err)
		}
		if err := pairsOK(got); err != nil {
			t.Fatal(err)
		}
		if len(env.summaries) > 0 {
			// The summary waited for the cleared request to fill the window:
			// far more rounds than 83% of uncleared results holds (about 20).
			if i < 60 {
				t.Errorf("summarized at round %d, before the cleared requests filled the window", i)
			}
			return
		}
		kept, cleared := 0, 0
		for _, m := range got {
			switch {
			case m.Role != ctxwin.RoleTool:
			case m.Content == microcompactText:
				cleared++
			default:
				kept++
			}
		}
		if kept != min(5, i+1) || kept+cleared != i+1 {
			t.Fatalf("request %d: %d results kept and %d cleared, want the last 5 kept and the rest cleared", i, kept, cleared)
		}
		if n := env.Tokens(got); n > 3320 {
			t.Fatalf("request %d: %d tokens, past 83%%, unsummarized", i, n)
		}
	}
	t.Error("never summarized in 400 rounds")
}
