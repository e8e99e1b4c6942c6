package lsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/engine"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// reika.transcript answers with the events the server sent as
// reika/transcript notifications (the full ones, not the streamed chunks),
// and a server started again on the same state, as after a window reload,
// answers the same before its first turn.
func TestTranscriptCommand(t *testing.T) {
	script := func(r *enginetest.Request) enginetest.Reply {
		if r.Index == 0 {
			return enginetest.Reply{Content: "Reading it.", ToolCalls: []ctxwin.ToolCall{{Name: "read", Arguments: `{"path":"a.txt"}`}}}
		}
		return enginetest.Text("a.txt says hello.")
	}
	state := t.TempDir()
	root := t.TempDir()
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello\n"), 0o644)
	// Each server gets an engine of its own, started with the agent and so
	// closed before the server's goroutine check (cleanups run last first):
	// its client's idle connections end with it.
	realAgent := func(t *testing.T) func(agent.Options) (agent.Service, error) {
		return func(opts agent.Options) (agent.Service, error) {
			srv := enginetest.New(enginetest.Options{Window: 16000, Script: script})
			t.Cleanup(srv.Close)
			model, err := engine.New(engine.Config{BaseURL: srv.URL(), CacheDir: t.TempDir()})
			if err != nil {
				return nil, err
			}
			opts.Model, opts.StateDir, opts.Resume = model, state, true
			return agent.New(opts)
		}
	}

	var live []agent.Event
	t.Run("the running server", func(t *testing.T) {
		h := start(t, harnessOptions{newAgent: realAgent(t)})
		h.root = root
		h.initialize(nil, nil)
		var res agent.AskResult
		h.mustCommand(CmdAsk, []any{map[string]any{"prompt": "what does a.txt say?"}}, &res)
		if res.Status != agent.AskDone {
			t.Fatalf("ask: %+v", res)
		}
		for _, m := range h.c.Notes(MethodTranscript) {
			ev := decode[agent.Event](t, m.Params)
			if !ev.Delta {
				live = append(live, ev)
			}
		}
		if len(live) < 5 {
			t.Fatalf("only %d transcript events: %+v", len(live), live)
		}
		var page agent.TranscriptPage
		h.mustCommand(CmdTranscript, []any{map[string]any{}}, &page)
		sameEvents(t, live, page)
		h.shutdownExit(true)
	})
	t.Run("a server started again", func(t *testing.T) {
		h := start(t, harnessOptions{newAgent: realAgent(t)})
		h.root = root
		h.initialize(nil, nil)
		var page agent.TranscriptPage
		h.mustCommand(CmdTranscript, nil, &page)
		sameEvents(t, live, page)
		h.shutdownExit(true)
	})
}

func sameEvents(t *testing.T, live []agent.Event, page agent.TranscriptPage) {
	t.Helper()
	if page.Omitted != 0 || len(page.Events) != len(live) || page.Session != live[0].Session {
		t.Fatalf("transcript: session %q, %d events, %d omitted; want session %q and the %d sent live",
			page.Session, len(page.Events), page.Omitted, live[0].Session, len(live))
	}
	for i := range live {
		want, _ := json.Marshal(live[i])
		got, _ := json.Marshal(page.Events[i])
		if string(got) != string(want) {
			t.Errorf("event %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// The argument is [{"maxChars"?: n}], [] or nothing; anything else is
// invalid params.
func TestTranscriptCommandArguments(t *testing.T) {
	h := start(t, harnessOptions{})
	f := h.initialized()
	for _, args := range [][]any{nil, {}, {map[string]any{}}, {map[string]any{"maxChars": 4096}}} {
		var page agent.TranscriptPage
		h.mustCommand(CmdTranscript, args, &page)
		if page.Session != "s1" || page.Events == nil {
			t.Errorf("%v: %+v", args, page)
		}
	}
	limits := f.TranscriptLimits()
	if len(limits) != 4 || limits[3] != 4096 || limits[0] != 0 {
		t.Errorf("limits passed to the agent: %v", limits)
	}
	for _, args := range [][]any{{"text"}, {map[string]any{"maxChars": -1}}, {map[string]any{"maxChars": "many"}}} {
		if err := h.command(CmdTranscript, args, nil); rpcCode(err) != -32602 {
			t.Errorf("%v: %v, want invalid params", args, err)
		}
	}
}
