package agent_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/engine"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// TestTurnWaitsForTheEngineToComeBack: the engine goes away between two
// turns; the next turn waits for it, its status saying so at level error,
// and completes once the engine is back on its port.
func TestTurnWaitsForTheEngineToComeBack(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	addr := freeAddr(t)
	first, err := enginetest.Listen(enginetest.Options{Window: 16000, Script: enginetest.Sequence(enginetest.Text("hello"))}, addr)
	if err != nil {
		t.Fatal(err)
	}
	model, err := engine.New(engine.Config{BaseURL: "http://" + addr + "/v1", CacheDir: t.TempDir(), ModelsURL: "http://127.0.0.1:1/never"})
	if err != nil {
		t.Fatal(err)
	}
	w := newStatusWatch()
	a, err := agent.New(agent.Options{Workspace: diskWorkspace{root: t.TempDir()}, Model: model, StateDir: t.TempDir(),
		Events: w, Settings: agent.Settings{Approve: agent.ApproveAll}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if res := a.Ask(context.Background(), agent.AskParams{Prompt: "hi"}); res.Status != agent.AskDone {
		t.Fatalf("ask with the engine up: %+v", res)
	}
	first.Close()
	done := make(chan agent.AskResult, 1)
	go func() { done <- a.Ask(context.Background(), agent.AskParams{Prompt: "still there?"}) }()
	_, at := w.waitFrom(t, 0, "saying the engine is unreachable", func(s agent.Status) bool {
		return strings.HasSuffix(s.Text, " · "+agent.DownText) && s.Level == agent.LevelError && s.Busy
	})
	second, err := enginetest.Listen(enginetest.Options{Window: 16000, Script: enginetest.Sequence(enginetest.Text("back"))}, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	select {
	case res := <-done:
		if res.Status != agent.AskDone {
			t.Fatalf("the turn after the engine came back: %+v", res)
		}
	case <-time.After(hangGuard):
		t.Fatal("the turn did not go on once the engine was back")
	}
	last, _ := w.waitFrom(t, at, "not busy", func(s agent.Status) bool { return !s.Busy })
	if last.Level != agent.LevelOK || strings.Contains(last.Text, agent.DownText) {
		t.Errorf("the status after the turn: %+v", last)
	}
	a.Close()
}

// TestAPromptTypedWhileTheEngineIsDownIsKept: with the engine down from
// the start (and no wait), the turn fails, but its prompt is in the
// session log; the next agent resumes the session and the engine sees it.
func TestAPromptTypedWhileTheEngineIsDownIsKept(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	root, state, addr := t.TempDir(), t.TempDir(), freeAddr(t)
	model, err := engine.New(engine.Config{BaseURL: "http://" + addr + "/v1", CacheDir: t.TempDir(), ModelsURL: "http://127.0.0.1:1/never", DownWait: -1})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Options{Workspace: diskWorkspace{root: root}, Model: model, StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	if res := a.Ask(context.Background(), agent.AskParams{Prompt: "PROMPT TYPED WHILE DOWN"}); res.Status != agent.AskError || !strings.Contains(res.Message, "unreachable") {
		t.Fatalf("ask with the engine down: %+v", res)
	}
	a.Close()
	data, err := os.ReadFile(onlyLog(t, state))
	if err != nil || !strings.Contains(string(data), "PROMPT TYPED WHILE DOWN") {
		t.Fatalf("the session log lacks the prompt (%v):\n%s", err, data)
	}

	srv, err := enginetest.Listen(enginetest.Options{Window: 16000, Script: enginetest.Sequence(enginetest.Text("done"))}, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	model, _ = engine.New(engine.Config{BaseURL: srv.URL(), CacheDir: t.TempDir(), ModelsURL: "http://127.0.0.1:1/never"})
	b, err := agent.New(agent.Options{Workspace: diskWorkspace{root: root}, Model: model, StateDir: state, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if res := b.Ask(context.Background(), agent.AskParams{Prompt: "go on"}); res.Status != agent.AskDone {
		t.Fatalf("ask once the engine is up: %+v", res)
	}
	reqs := srv.Requests()
	var users []string
	for _, m := range reqs[len(reqs)-1].Request.Messages {
		if m.Role == ctxwin.RoleUser {
			users = append(users, m.Content)
		}
	}
	if strings.Join(users, "|") != "PROMPT TYPED WHILE DOWN|go on" {
		t.Errorf("the resumed request's user messages: %q", users)
	}
	b.Close()
}

// TestABrokenReplyIsRetractedFromTheTranscript: a stream cut mid-way is
// asked again; the transcript closes the broken text's block empty before
// the next attempt streams, so the editors keep none of it.
func TestABrokenReplyIsRetractedFromTheTranscript(t *testing.T) {
	long := enginetest.Reply{Content: strings.Repeat("A reply long enough to stream in several chunks. ", 6)}
	broken := long
	broken.Fault = enginetest.Fault{Reset: true, AfterChunks: 3}
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: enginetest.Sequence(broken, long)})
	defer srv.Close()
	col := &collector{shrinkBefore: map[int]bool{}}
	a := newAgent(t, srv, t.TempDir(), agent.Settings{}, col)
	if res := a.Ask(context.Background(), agent.AskParams{Prompt: "hi"}); res.Status != agent.AskDone {
		t.Fatalf("ask: %+v", res)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	var shown, kinds []string // the assistant text as an editor builds it
	for _, e := range col.events {
		if e.Kind != agent.EventAssistant {
			continue
		}
		if e.Delta {
			if len(kinds) == 0 || kinds[len(kinds)-1] != "open" {
				shown, kinds = append(shown, ""), append(kinds, "open")
			}
			shown[len(shown)-1] += e.Text
			continue
		}
		if len(kinds) > 0 && kinds[len(kinds)-1] == "open" {
			shown[len(shown)-1], kinds[len(kinds)-1] = e.Text, "closed"
		} else {
			shown, kinds = append(shown, e.Text), append(kinds, "closed")
		}
	}
	if strings.Join(shown, "") != long.Content || len(shown) != 2 || shown[0] != "" {
		t.Errorf("the transcript's assistant blocks: %q", shown)
	}
}
