package agent_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/engine"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
)

// The transcript rebuilt from the session log is what the turns sent live:
// every full (not streamed) event, in order, with the same fields — across
// sheds, a note and a fold, and after a restart that resumes the session.
func TestTranscriptRebuildsTheLiveEvents(t *testing.T) {
	root := t.TempDir()
	files := goFiles(t, root, 40, 1500, 7000)
	state := t.TempDir()
	var mu sync.Mutex
	main := 0
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: cycleScript(files[:20], &main, &mu)})
	defer srv.Close()
	start := func(ev agent.Events) *agent.Agent {
		model, err := engine.New(engine.Config{BaseURL: srv.URL(), CacheDir: t.TempDir(), ModelsURL: "http://127.0.0.1:1/never"})
		if err != nil {
			t.Fatal(err)
		}
		a, err := agent.New(agent.Options{Workspace: diskWorkspace{root: root}, Model: model, StateDir: state, Resume: true,
			Events: ev, Settings: agent.Settings{Approve: agent.ApproveAll}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	col := &collector{shrinkBefore: map[int]bool{}}
	a := start(col)
	if res := a.Ask(context.Background(), agent.AskParams{Prompt: cycleTask}); res.Status != agent.AskDone {
		t.Fatalf("ask: %+v", res)
	}
	if res := a.Ask(context.Background(), agent.AskParams{Prompt: "and now the second turn"}); res.Status != agent.AskDone {
		t.Fatalf("second ask: %+v", res)
	}
	col.mu.Lock()
	var live []agent.Event
	for _, e := range col.events {
		if !e.Delta {
			live = append(live, e)
		}
	}
	col.mu.Unlock()
	kinds := map[string]int{}
	for _, e := range live {
		kinds[e.Kind]++
	}
	for _, k := range []string{agent.EventUser, agent.EventAssistant, agent.EventToolCall, agent.EventToolResult, agent.EventShed, agent.EventNote, agent.EventFold} {
		if kinds[k] == 0 {
			t.Fatalf("the session has no %s event, so it cannot show that one is rebuilt: %v", k, kinds)
		}
	}

	page, err := a.Transcript(0)
	if err != nil {
		t.Fatal(err)
	}
	checkSameEvents(t, "the running agent", live, page)
	a.Close()

	b := start(nil)
	defer b.Close()
	page, err = b.Transcript(0)
	if err != nil {
		t.Fatal(err)
	}
	checkSameEvents(t, "a restarted agent before its first turn", live, page)
}

func checkSameEvents(t *testing.T, who string, live []agent.Event, page agent.TranscriptPage) {
	t.Helper()
	if page.Omitted != 0 || len(page.Events) != len(live) {
		t.Fatalf("%s: %d events (%d omitted), want the %d sent live", who, len(page.Events), page.Omitted, len(live))
	}
	if page.Session == "" || page.Session != live[0].Session {
		t.Errorf("%s: session %q, want %q", who, page.Session, live[0].Session)
	}
	for i := range live {
		want, _ := json.Marshal(live[i])
		got, _ := json.Marshal(page.Events[i])
		if string(got) != string(want) {
			t.Fatalf("%s: event %d:\n got %.300s\nwant %.300s", who, i, got, want)
		}
	}
}

// The page holds the newest events that fit the limit and counts the rest.
func TestTranscriptKeepsTheNewestWithinTheLimit(t *testing.T) {
	srv := enginetest.New(enginetest.Options{Window: 32000, Script: func(r *enginetest.Request) enginetest.Reply {
		return enginetest.Text("an answer of some forty characters, or so")
	}})
	defer srv.Close()
	a := newAgent(t, srv, t.TempDir(), agent.Settings{}, nil)
	if page, err := a.Transcript(0); err != nil || page.Session != "" || len(page.Events) != 0 {
		t.Fatalf("before any turn: %+v, %v", page, err)
	}
	for _, p := range []string{"first question", "second question", "third question"} {
		if res := a.Ask(context.Background(), agent.AskParams{Prompt: p}); res.Status != agent.AskDone {
			t.Fatalf("%s: %+v", p, res)
		}
	}
	all, err := a.Transcript(0)
	if err != nil || len(all.Events) != 6 || all.Omitted != 0 {
		t.Fatalf("whole transcript: %d events, %d omitted, %v", len(all.Events), all.Omitted, err)
	}
	last := all.Events[4:]
	limit := len(last[0].Text) + len(last[1].Text)
	page, err := a.Transcript(limit)
	if err != nil {
		t.Fatal(err)
	}
	if page.Omitted != 4 || len(page.Events) != 2 || page.Events[0].Text != "third question" || page.Events[0].Turn != 3 {
		t.Errorf("limit %d: %+v", limit, page)
	}
}
