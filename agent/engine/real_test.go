package engine

// The client against a real llama-server (internal/llamaserver): what the
// fake cannot show. Skipped with a notice when no server is at hand,
// failed in strict mode.

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/agent/tools"
	"github.com/reika-lsp/reika-lsp/internal/gguf"
	"github.com/reika-lsp/reika-lsp/internal/llamaserver"
)

// realCaller is the hand-wired model the real tests serve.
var realCaller = gguf.ToolCaller{
	Default: []string{"Nothing to do."},
	Actions: []gguf.Action{
		{Signal: "[[call]]", Pieces: []string{gguf.CallText("read", `{"path": "a.txt"}`)}},
		{Signal: "[[split]]", Pieces: []string{"<tool_call>\n{\"name\": \"read\", ", "\"arguments\": {\"path\": ", "\"c.txt\"}}\n</tool_call>"}},
		{Signal: "[[junk]]", Pieces: []string{"<tool_call>\nnot json at all\n</tool_call>"}},
	},
}

func startReal(t *testing.T, cfg llamaserver.Config) *llamaserver.Server {
	t.Helper()
	tree := llamaserver.Find(t)
	if cfg.Model == "" {
		cfg.Model = llamaserver.ToolCallerModel(t, realCaller)
		cfg.Args = append(cfg.Args, llamaserver.ToolCallerArgs...)
	}
	return llamaserver.Start(t, tree, cfg)
}

// realClient is a client of srv; its log goes to logs.
func realClient(t *testing.T, srv *llamaserver.Server, mods ...option) (*Client, *logs) {
	t.Helper()
	l := &logs{}
	cfg := Config{BaseURL: srv.URL(), CacheDir: t.TempDir(), ModelsURL: "http://127.0.0.1:1/never", Logf: l.logf, HTTPClient: testHTTP(t, nil)}
	for _, m := range mods {
		m(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("client log:\n%s", l)
		}
	})
	return c, l
}

// TestRealDiscovery: the per-slot window in every configuration measured
// on llama-server, from /v1/models meta.n_ctx, agreeing with /props.
func TestRealDiscovery(t *testing.T) {
	llamaserver.Find(t)
	model := llamaserver.RandomModel(t)
	for _, tc := range []struct {
		name   string
		cfg    llamaserver.Config
		window int
	}{
		{"-c 8192 -np 2: 4096 a slot", llamaserver.Config{Ctx: 8192, Parallel: 2}, 4096},
		{"-c 8192 -np 2 -kvu: 8192 a slot", llamaserver.Config{Ctx: 8192, Parallel: 2, KVUnified: true}, 8192},
		{"-c 4096, slots picked by the server", llamaserver.Config{Ctx: 4096}, 4096},
		{"no -c: the training context", llamaserver.Config{Parallel: 1}, gguf.RandomCtxTrain},
		{"-c 40000 on a 32768-token model: 32768", llamaserver.Config{Ctx: 40000, Parallel: 1}, gguf.RandomCtxTrain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Model = model
			srv := startReal(t, cfg)
			c, l := realClient(t, srv)
			info, err := c.Info(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			if info.Window != tc.window || info.WindowSource != llm.SourceEndpoint || info.Engine != EngineLlamaCpp {
				t.Errorf("info %+v, want window %d from the endpoint", info, tc.window)
			}
			b, err := c.get(ctx(t), c.rootURL+"/props")
			if err != nil {
				t.Fatal(err)
			}
			if n, ok := parseProps(b); !ok || n != tc.window {
				t.Errorf("/props n_ctx %d, listing %d", n, tc.window)
			}
			if !strings.Contains(l.String(), "window") {
				t.Errorf("the discovery was not logged:\n%s", l)
			}
		})
	}
}

// TestRealStreamingUsageAndTimings: a streamed reply with the usage and
// llama.cpp's timings, whose counts agree.
func TestRealStreamingUsageAndTimings(t *testing.T) {
	srv := startReal(t, llamaserver.Config{Ctx: 4096, Parallel: 1})
	c, _ := realClient(t, srv)
	var deltas []llm.Delta
	req := userReq("hello there")
	resp, err := c.Complete(ctx(t), req, func(d llm.Delta) { deltas = append(deltas, d) })
	if err != nil {
		t.Fatal(err)
	}
	u, tm := resp.Usage, resp.Timings
	if resp.Message.Content != "Nothing to do." || resp.FinishReason != "stop" || len(deltas) == 0 {
		t.Errorf("reply %+v after %d deltas", resp, len(deltas))
	}
	if u == nil || tm == nil || !u.CachedKnown || u.PromptTokens != tm.CacheN+tm.PromptN || u.CachedTokens != tm.CacheN || u.CompletionTokens != 2 {
		t.Errorf("usage %+v, timings %+v", u, tm)
	}
	// The same request again: all but one prompt token from the cache.
	resp, err = c.Complete(ctx(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Timings.CacheN != resp.Usage.PromptTokens-1 || resp.Timings.PromptN != 1 {
		t.Errorf("again: timings %+v of %d", resp.Timings, resp.Usage.PromptTokens)
	}
	// A tool call, streamed: the first delta already carries arguments.
	resp, err = c.Complete(ctx(t), userReq("read it [[split]]"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Arguments != `{"path": "c.txt"}` || resp.FinishReason != "tool_calls" {
		t.Errorf("call %+v", resp)
	}
}

// TestRealOverflow: the real overflow body gives the window and the
// prompt's size; the window is learned and a smaller request goes through.
func TestRealOverflow(t *testing.T) {
	srv := startReal(t, llamaserver.Config{Ctx: 2048, Parallel: 1})
	c, l := realClient(t, srv, withWindow(8192)) // a setting larger than the slot
	req := userReq(strings.Repeat("The quick brown fox jumps over the lazy dog. ", 600))
	_, err := c.Complete(ctx(t), req, nil)
	var o *llm.OverflowError
	if !asOverflow(err, &o) || o.Window != 2048 || o.PromptTokens <= 2048 || !strings.Contains(o.Message, "exceeds the available context size (2048 tokens)") {
		t.Fatalf("err = %v", err)
	}
	info, _ := c.Info(ctx(t))
	if info.Window != 2048 || info.WindowSource != llm.SourceOverflow {
		t.Errorf("after the overflow: %+v", info)
	}
	if !strings.Contains(l.String(), "states a window of 2048 tokens") {
		t.Errorf("log:\n%s", l)
	}
	if resp, err := c.Complete(ctx(t), userReq("short now"), nil); err != nil || resp.Message.Content == "" {
		t.Errorf("after the overflow: %+v %v", resp, err)
	}
}

func asOverflow(err error, o **llm.OverflowError) bool {
	if err == nil {
		return false
	}
	return errors.As(err, o)
}

// TestRealLoading: while llama-server loads its model every route answers
// 503; discovery waits, the hook hears of it, and no REIKA_MODEL hint.
func TestRealLoading(t *testing.T) {
	srv := startReal(t, llamaserver.Config{Ctx: 4096, Parallel: 1, HoldLoad: true})
	c, l := realClient(t, srv)
	var seen []bool
	c.WatchLoading(func(loading bool) {
		seen = append(seen, loading)
		if loading {
			srv.Release() // returns once the model is loaded
		}
	})
	info, err := c.Info(ctx(t))
	if err != nil || info.Window != 4096 {
		t.Fatalf("info %+v, err %v", info, err)
	}
	if len(seen) != 2 || !seen[0] || seen[1] {
		t.Errorf("hook told %v", seen)
	}
	if log := l.String(); !strings.Contains(log, "is loading its model") || strings.Contains(log, "REIKA_MODEL") {
		t.Errorf("log:\n%s", log)
	}
}

// TestRealAPIKey: with --api-key only /health is public; without the key
// the error names REIKA_API_KEY, with it discovery and chat work.
func TestRealAPIKey(t *testing.T) {
	srv := startReal(t, llamaserver.Config{Ctx: 4096, Parallel: 1, APIKey: "sk-real-test"})
	c, _ := realClient(t, srv)
	if _, err := c.Info(ctx(t)); err == nil || !strings.Contains(err.Error(), "REIKA_API_KEY") {
		t.Errorf("without the key: %v", err)
	}
	c, l := realClient(t, srv, func(cfg *Config) { cfg.APIKey = "sk-real-test" })
	info, err := c.Info(ctx(t))
	if err != nil || info.Window != 4096 {
		t.Fatalf("with the key: %+v %v", info, err)
	}
	if resp, err := c.Complete(ctx(t), userReq("hi"), nil); err != nil || resp.Message.Content == "" {
		t.Errorf("chat with the key: %+v %v", resp, err)
	}
	if strings.Contains(l.String(), "sk-real-test") {
		t.Error("the key is in the log")
	}
}

// TestRealCutCallsAreDropped: llama.cpp returns the calls of a reply cut
// by max_tokens, the last one cut short; the client drops them.
func TestRealCutCallsAreDropped(t *testing.T) {
	srv := startReal(t, llamaserver.Config{Ctx: 4096, Parallel: 1})
	c, l := realClient(t, srv)
	req := userReq("read it [[split]]")
	req.MaxTokens = 2
	resp, err := c.Complete(ctx(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.FinishReason != "length" || len(resp.Message.ToolCalls) != 0 || !strings.Contains(l.String(), "dropping them") {
		t.Errorf("reply %+v, log:\n%s", resp, l)
	}
}

// TestRealRejectedOutput: output the server rejects (its tool grammar,
// here) is a 500 — streamed, an error line without [DONE]. It is asked
// once more, not four times, and the error names the engine's words.
func TestRealRejectedOutput(t *testing.T) {
	srv := startReal(t, llamaserver.Config{Ctx: 4096, Parallel: 1})
	c, l := realClient(t, srv)
	_, err := c.Complete(ctx(t), userReq("go [[junk]]"), nil)
	if err == nil || !strings.Contains(err.Error(), "Unexpected empty grammar stack") || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("err = %v", err)
	}
	// Both generations end with "stop processing"; wait for the second
	// to reach the log before counting them.
	srv.WaitLog("stop processing", 2, 10*time.Second)
	if n := strings.Count(srv.Log(), "processing task"); n != 2 {
		t.Errorf("the server generated %d times, want 2", n)
	}
	if strings.Contains(l.String(), "without streaming;") {
		t.Errorf("asked again without streaming:\n%s", l)
	}
}

// TestRealRestartLosesTheCache: the agent's debug line says so when the
// server restarted between two rounds.
func TestRealRestartLosesTheCache(t *testing.T) {
	srv := startReal(t, llamaserver.Config{Ctx: 6144, Parallel: 1})
	c, _ := realClient(t, srv)
	l := &logs{}
	a, err := agent.New(agent.Options{Workspace: emptyWorkspace{root: t.TempDir()}, Model: c, StateDir: t.TempDir(), Logf: l.logf,
		Settings: agent.Settings{Debug: true, Approve: agent.ApproveAll}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for i, p := range []string{"one", "two", "three"} {
		if i == 2 {
			srv.Restart()
		}
		if res := a.Ask(context.Background(), agent.AskParams{Prompt: p}); res.Status != agent.AskDone {
			t.Fatalf("ask %q: %+v\n%s", p, res, l)
		}
	}
	var dbg []string
	for _, line := range strings.Split(l.String(), "\n") {
		if strings.Contains(line, "prefix-cache round") {
			dbg = append(dbg, line)
		}
	}
	if len(dbg) != 3 || strings.Contains(dbg[1], "lost") || !strings.Contains(dbg[2], "the engine's cache was lost") {
		t.Errorf("debug lines:\n%s", strings.Join(dbg, "\n"))
	}
}

// emptyWorkspace is a directory with nothing open in an editor.
type emptyWorkspace struct {
	tools.DiskFiles
	root string
}

func (w emptyWorkspace) Root() string { return w.root }
