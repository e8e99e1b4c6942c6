package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
	"github.com/reika-lsp/reika-lsp/internal/gguf"
	"github.com/reika-lsp/reika-lsp/internal/llamaserver"
)

// subCaller calls a subagent on [[sub]]; the subagent, whose prompt holds
// no signal, reports " [[back]] ", which the tool trims to the signal the
// session then answers.
var subCaller = gguf.ToolCaller{
	Default: []string{" [[back]] "},
	Actions: []gguf.Action{
		{Signal: "[[sub]]", Pieces: []string{gguf.CallText("subagent", `{"task": "look around the workspace and report"}`)}},
		{Signal: "[[back]]", Pieces: []string{"Main is done."}},
	},
}

// recorded is what one request of a session was and cost.
type recorded struct {
	subagent bool
	prompt   int
	timings  llm.Timings
}

// recordingModel records what each request cost; before, when set, runs
// before the first request is sent.
type recordingModel struct {
	*Client
	mu     sync.Mutex
	reqs   []recorded
	before func()
}

func (m *recordingModel) Complete(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	m.mu.Lock()
	if m.before != nil && len(m.reqs) == 0 {
		m.before()
	}
	m.mu.Unlock()
	resp, err := m.Client.Complete(ctx, req, onDelta)
	if err == nil && resp.Timings != nil && resp.Usage != nil {
		m.mu.Lock()
		m.reqs = append(m.reqs, recorded{subagent: req.Subagent, prompt: resp.Usage.PromptTokens, timings: *resp.Timings})
		m.mu.Unlock()
	}
	return resp, err
}

// TestRealSubagentKeepsTheMainPrefix: a turn that runs a subagent, on
// llama-server with its default slots (no -np: 4 sharing one KV cache)
// and with one. With 4, the session's first request names slot 0 and the
// subagent's the last, and the server's log says it served each there
// ("selected slot by id"); the session's request after the subagent names
// none (the subagent's task cleared slot 0, and only a request that names
// no slot is restored from host memory), finds its whole prompt restored,
// and the session's pin follows it. With one slot nothing is named, and
// the host-memory prompt cache restores the session's prompt after the
// subagent.
func TestRealSubagentKeepsTheMainPrefix(t *testing.T) {
	tree := llamaserver.Find(t)
	model := llamaserver.ToolCallerModel(t, subCaller)
	for _, np := range []int{0, 1} {
		t.Run(map[int]string{0: "default slots", 1: "-np 1"}[np], func(t *testing.T) {
			srv := llamaserver.Start(t, tree, llamaserver.Config{Model: model, Ctx: 8192, Parallel: np, Args: llamaserver.ToolCallerArgs})
			c, l := realClient(t, srv)
			rec := &recordingModel{Client: c}
			dbg := &logs{}
			a, err := agent.New(agent.Options{Workspace: emptyWorkspace{root: t.TempDir()}, Model: rec, StateDir: t.TempDir(), Logf: dbg.logf,
				Settings: agent.Settings{Debug: true, Approve: agent.ApproveAll}})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if res := a.Ask(context.Background(), agent.AskParams{Prompt: "go [[sub]]"}); res.Status != agent.AskDone {
				t.Fatalf("ask: %+v\n%s", res, dbg)
			}
			r := rec.reqs
			if len(r) != 3 || r[0].subagent || !r[1].subagent || r[2].subagent {
				t.Fatalf("requests %+v\n%s", r, dbg)
			}
			main1, sub, main2 := r[0], r[1], r[2]
			t.Logf("%s: main %d tokens (cache_n %d); subagent %d tokens (cache_n %d); main after it %d tokens: cache_n %d, prompt_n %d",
				t.Name(), main1.prompt, main1.timings.CacheN, sub.prompt, sub.timings.CacheN, main2.prompt, main2.timings.CacheN, main2.timings.PromptN)
			if main2.timings.CacheN < main1.prompt {
				t.Errorf("after the subagent the session reused %d tokens of the %d it had sent", main2.timings.CacheN, main1.prompt)
			}
			if np == 0 {
				// The log reaches us through a pipe: wait for the lines.
				srv.WaitLog("selected slot by", 3, 5*time.Second)
				log := srv.Log()
				if n0, n3, n := strings.Count(log, "selected slot by id (0)"), strings.Count(log, "selected slot by id (3)"), strings.Count(log, "selected slot by"); n0 != 1 || n3 != 1 || n != 3 {
					t.Errorf("the server served %d requests by id on slot 0, %d on slot 3, %d in all; want 1, 1 and 3; client log:\n%s", n0, n3, n, l)
				}
				if !strings.Contains(l.String(), "the server has 4 slots") || !strings.Contains(l.String(), "subagent requests go to slot 3") ||
					!strings.Contains(l.String(), "its requests go there now") {
					t.Errorf("client log:\n%s", l)
				}
			} else if byID := strings.Count(srv.Log(), "selected slot by id"); byID != 0 {
				t.Errorf("%d requests named a slot on a one-slot server; client log:\n%s", byID, l)
			}
			if tip := a.Status().Tooltip; !strings.Contains(tip, "Prompt tokens this session: ") {
				t.Errorf("tooltip:\n%s", tip)
			}
		})
	}
}

// TestRealTwoWindowsKeepTheirSlots: two sessions (two editor windows,
// sharing the slot locks) on llama-server with its default slots. Each
// session's requests name its own slot and the server serves them there;
// a session's request after the other's names none (the other's task
// cleared its slot) and is restored from host memory, and its next names
// the slot that served it.
func TestRealTwoWindowsKeepTheirSlots(t *testing.T) {
	tree := llamaserver.Find(t)
	srv := llamaserver.Start(t, tree, llamaserver.Config{Model: llamaserver.RandomModel(t), Ctx: 8192})
	cache := t.TempDir()
	open := func() (*Client, *logs) {
		return realClient(t, srv, func(c *Config) { c.CacheDir = cache })
	}
	a, la := open()
	b, _ := open()
	history := map[*Client][]ctxwin.Message{}
	ask := func(c *Client, name string) llm.Timings {
		t.Helper()
		h := history[c]
		if h == nil {
			h = []ctxwin.Message{{Role: ctxwin.RoleSystem, Content: "You are coding agent " + name + ". " + strings.Repeat("Read before you answer. ", 60)}}
		}
		h = append(h, ctxwin.Message{Role: ctxwin.RoleUser, Content: fmt.Sprintf("Question %d of window %s: %s", len(h), name, strings.Repeat("which file holds the parser? ", 20))})
		resp, err := c.Complete(ctx(t), &llm.Request{Messages: h, MaxTokens: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		history[c] = append(h, resp.Message)
		return *resp.Timings
	}
	ask(a, "A")
	a2 := ask(a, "A")
	ask(b, "B")
	a3 := ask(a, "A")
	a4 := ask(a, "A")
	srv.WaitLog("selected slot by", 5, 5*time.Second)
	var picks []string
	for _, line := range strings.Split(srv.Log(), "\n") {
		if i := strings.Index(line, "selected slot by "); i >= 0 {
			picks = append(picks, strings.SplitN(line[i+len("selected slot by "):], ",", 2)[0])
		}
	}
	t.Logf("the server's picks: %q; window A's second request reused %d, its first after B's %d (processed %d), its next %d (processed %d)",
		picks, a2.CacheN, a3.CacheN, a3.PromptN, a4.CacheN, a4.PromptN)
	moved := strings.Contains(la.String(), "its requests go there now")
	want := []string{"id (0)", "id (0)", "id (1)"}
	if len(picks) != 5 || !slices.Equal(picks[:3], want) || strings.HasPrefix(picks[3], "id") || !strings.HasPrefix(picks[4], "id") || !moved {
		t.Errorf("the server's picks %q, want %q, then one by LRU or similarity, then by id", picks, want)
	}
	// Each request adds a question of about 270 tokens.
	if a2.PromptN > 320 || a3.PromptN > 320 || a4.PromptN > 320 {
		t.Errorf("window A processed %d, %d and %d tokens after its first request: more than its new question", a2.PromptN, a3.PromptN, a4.PromptN)
	}
}
