package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// goSource copies a file of the Go distribution (src-relative) into root
// and returns its workspace-relative path.
func goSource(t *testing.T, root, rel string) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "src", rel))
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(root, "src", rel)
	os.MkdirAll(filepath.Dir(dst), 0o755)
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(filepath.Join("src", rel))
}

// windowless serves the fake llama.cpp engine with its window hidden, as a
// proxy in front of it that drops what it does not know would: GET
// /v1/models without meta.n_ctx, and no /props. Completions and /tokenize
// pass through.
func windowless(t *testing.T, srv *enginetest.Server) string {
	t.Helper()
	target, _ := url.Parse(srv.RootURL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	ps := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/props":
			http.NotFound(w, r)
			return
		case "/v1/models", "/models":
			resp, err := http.Get(srv.URL() + "/models")
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			defer resp.Body.Close()
			var listing map[string]any
			b, _ := io.ReadAll(resp.Body)
			json.Unmarshal(b, &listing)
			for _, e := range listing["data"].([]any) {
				delete(e.(map[string]any)["meta"].(map[string]any), "n_ctx")
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(listing)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(ps.Close)
	return ps.URL + "/v1"
}

// chats is the chat completion requests the engine saw, notes left out.
func chats(srv *enginetest.Server) []enginetest.Recorded {
	var out []enginetest.Recorded
	for _, r := range srv.Requests() {
		if r.Path == "/v1/chat/completions" && r.Request.ToolChoice != "none" {
			out = append(out, r)
		}
	}
	return out
}

// TestUnknownWindowBigRead: with no window known, the first read of 2000
// lines of net/http/server.go is refused by a 16k engine; the agent adopts
// the window the refusal states, cuts the read to fit, and goes on, on the
// first turn of the session. Against llama.cpp (behind a proxy that hides
// the window; its /tokenize still counts) and a hosted endpoint (no
// tokenizer: the estimate prices the read).
func TestUnknownWindowBigRead(t *testing.T) {
	for _, shape := range []string{enginetest.ShapeLlamaCpp, enginetest.ShapeHosted} {
		t.Run(shape, func(t *testing.T) {
			root := t.TempDir()
			big := goSource(t, root, "net/http/server.go")
			srv := enginetest.New(enginetest.Options{Shape: shape, Window: 16384, Script: func(r *enginetest.Request) enginetest.Reply {
				last := r.Messages[len(r.Messages)-1]
				switch {
				case r.ToolChoice == "none":
					return enginetest.Text("NOTE: reading server.go")
				case last.Role == ctxwin.RoleTool:
					return enginetest.Text("Done: ServeHTTP dispatches on the handler.")
				}
				return enginetest.Call("read", fmt.Sprintf(`{"path":%q}`, big))
			}})
			defer srv.Close()
			base := srv.URL()
			if shape == enginetest.ShapeLlamaCpp {
				base = windowless(t, srv)
			}
			a := newAgentAt(t, base, root, agent.Settings{}, &collector{shrinkBefore: map[int]bool{}})
			if st := waitDiscovered(t, a); st.Window != nil {
				t.Fatalf("setup: the window is known: %+v", st)
			}
			res := a.Ask(context.Background(), agent.AskParams{Prompt: "What does net/http's server do with a request?"})
			if res.Status != agent.AskDone {
				t.Fatalf("the turn ended %s: %s", res.Status, res.Message)
			}
			reqs := chats(srv)
			overflows := 0
			for i, r := range reqs {
				if r.Overflowed {
					overflows++
					if i+1 >= len(reqs) || reqs[i+1].Overflowed {
						t.Fatalf("request %d overflowed and was not followed by a retry that fits", i)
					}
					retry := reqs[i+1]
					cut := false
					for _, m := range retry.Request.Messages {
						cut = cut || m.Role == ctxwin.RoleTool && strings.Contains(m.Content, "hit the context limit")
					}
					if !cut {
						t.Errorf("the retry after request %d does not carry the read cut to fit", i)
					}
					if retry.PromptTokens+retry.Request.MaxTokens > 16384 {
						t.Errorf("the retry asks for %d prompt + %d output tokens of a 16384 window", retry.PromptTokens, retry.Request.MaxTokens)
					}
					t.Logf("refused %d tokens; the retry has %d (max_tokens %d)", r.PromptTokens, retry.PromptTokens, retry.Request.MaxTokens)
				}
			}
			if overflows != 1 {
				t.Errorf("%d refusals, want the one of the first big read", overflows)
			}
			st := a.Status()
			if st.Window == nil || *st.Window != 16384 || st.WindowSource != llm.SourceOverflow {
				t.Errorf("the window the refusal stated was not adopted: %+v", st)
			}
		})
	}
}

// waitDiscovered waits for the start-up discovery to finish (the status
// then names the model) and returns the status.
func waitDiscovered(t *testing.T, a *agent.Agent) agent.Status {
	t.Helper()
	for range 1000 {
		if st := a.Status(); st.Model != "" {
			return st
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("discovery did not finish")
	return agent.Status{}
}

// TestWindowSettingLargerThanEngine: REIKA_CONTEXT_WINDOW says 32768, the
// engine has 16384. vLLM refuses the first request for its max_tokens;
// llama.cpp refuses the first prompt past 16384. Either way the agent adopts
// the engine's window, retries with a request and a max_tokens that fit, and
// finishes the turn — the first of the session — and the next turn sends
// nothing too large.
func TestWindowSettingLargerThanEngine(t *testing.T) {
	root := t.TempDir()
	files := goFiles(t, root, 20, 3000, 9000)
	for _, shape := range []string{enginetest.ShapeVLLM, enginetest.ShapeLlamaCpp} {
		t.Run(shape, func(t *testing.T) {
			var mu sync.Mutex
			main := 0
			srv := enginetest.New(enginetest.Options{Shape: shape, Window: 16384, Script: cycleScript(files, &main, &mu)})
			defer srv.Close()
			col := &collector{shrinkBefore: map[int]bool{}}
			a := newAgent(t, srv, root, agent.Settings{ContextWindow: 32768}, col)
			if res := a.Ask(context.Background(), agent.AskParams{Prompt: cycleTask}); res.Status != agent.AskDone {
				t.Fatalf("the first turn ended %s: %s", res.Status, res.Message)
			}
			first := len(chats(srv))
			srv.SetScript(func(r *enginetest.Request) enginetest.Reply { return enginetest.Text("hello") })
			if res := a.Ask(context.Background(), agent.AskParams{Prompt: "hello"}); res.Status != agent.AskDone {
				t.Fatalf("the second turn ended %s: %s", res.Status, res.Message)
			}
			reqs := chats(srv)
			overflows := 0
			for i, r := range reqs {
				if r.Overflowed {
					overflows++
					if i >= first {
						t.Errorf("request %d of the second turn was refused", i)
					}
					continue
				}
				if overflows > 0 && r.PromptTokens+r.Request.MaxTokens > 16384+ctxwin.ReplyMargin {
					t.Errorf("request %d after the refusal asks for %d prompt + %d output tokens", i, r.PromptTokens, r.Request.MaxTokens)
				}
			}
			if overflows != 1 {
				t.Errorf("%d refusals, want one", overflows)
			}
			if shape == enginetest.ShapeVLLM && !reqs[0].Overflowed {
				t.Error("vLLM did not refuse the first request's max_tokens: the test does not test that")
			}
			st := a.Status()
			if st.Window == nil || *st.Window != 16384 || st.WindowSource != llm.SourceOverflow {
				t.Errorf("the engine's window was not adopted: %+v", st)
			}
		})
	}
}

// TestRereadLoopStopped: a model that reads src/strings/strings.go (33 KB)
// again after every shrink makes no progress; the turn stops with the
// file's name and what to do.
func TestRereadLoopStopped(t *testing.T) {
	root := t.TempDir()
	big := goSource(t, root, "strings/strings.go")
	small := goFiles(t, root, 30, 1500, 6000)
	var prev []ctxwin.Message
	next := 0
	srv := enginetest.New(enginetest.Options{Window: 16384, Script: func(r *enginetest.Request) enginetest.Reply {
		if r.ToolChoice == "none" {
			return enginetest.Text("NOTE: strings.go holds the functions")
		}
		first := prev == nil
		shrunk := !first && !ctxwin.Diverge(prev, r.Messages).Append
		prev = r.Messages
		if first || shrunk {
			return enginetest.Call("read", fmt.Sprintf(`{"path":%q}`, big))
		}
		if next >= len(small) {
			return enginetest.Text("Done.")
		}
		next++
		return enginetest.Call("read", fmt.Sprintf(`{"path":%q}`, small[next-1]))
	}})
	defer srv.Close()
	a := newAgent(t, srv, root, agent.Settings{}, &collector{shrinkBefore: map[int]bool{}})
	res := a.Ask(context.Background(), agent.AskParams{Prompt: "Which functions of the strings package allocate?"})
	if res.Status != agent.AskError || !strings.Contains(res.Message, "made no progress") || !strings.Contains(res.Message, big) ||
		!strings.Contains(res.Message, "start_line") {
		t.Fatalf("the re-read loop was not stopped with the file named: %+v", res)
	}
	if next >= len(small) {
		t.Errorf("stopped only after all %d other files were read", next)
	}
	t.Logf("stopped after %d requests: %s", len(chats(srv)), res.Message)
}
