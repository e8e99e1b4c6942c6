package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// Right at the edge of a small window (issue 27): a new result sized after
// the shrink its request makes, always room to answer, and a thrash guard
// that needs no tokenizer.

// edgeUsable is the usable window of a 16k engine with the default reserve.
var edgeUsable = ctxwin.NewBudget(16384, ctxwin.DefaultReserve).Usable

// lateResult runs a survey of 40 files of 3–10 KB on a 16k window; once a
// request stands at 82% of the usable window or more (the shed cycle keeps
// it between the shed target, 63%, and the shed point, 90%), the model
// makes the call final instead, then answers. It returns the view of that
// call's result in the first request that carries it, and that request.
func lateResult(t *testing.T, root string, final ctxwin.ToolCall) (view string, req enginetest.Recorded, srv *enginetest.Server) {
	t.Helper()
	files := goFiles(t, root, 40, 3000, 10000)
	var mu sync.Mutex
	read, called := 0, false
	srv = enginetest.New(enginetest.Options{Window: 16384, Script: func(r *enginetest.Request) enginetest.Reply {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.ToolChoice == "none":
			return enginetest.Text(fmt.Sprintf("NOTE: read %d files so far.", read))
		case called:
			return enginetest.Text("Done: the allocating functions are Builder.grow and Repeat.")
		case read >= 8 && r.PromptTokens >= edgeUsable*82/100:
			called = true
			return enginetest.Reply{ToolCalls: []ctxwin.ToolCall{final}}
		case read >= len(files):
			return enginetest.Text("Done without the last call.")
		}
		read++
		args, _ := json.Marshal(map[string]string{"path": files[read-1]})
		return enginetest.Call("read", string(args))
	}})
	t.Cleanup(srv.Close)
	a := newAgent(t, srv, root, agent.Settings{}, &collector{shrinkBefore: map[int]bool{}})
	if res := a.Ask(context.Background(), agent.AskParams{Prompt: cycleTask}); res.Status != agent.AskDone {
		t.Fatalf("the turn ended %s: %s", res.Status, res.Message)
	}
	if !called {
		t.Fatalf("no request reached 82%% of the usable window (%d tokens) in %d reads", edgeUsable*82/100, read)
	}
	reqs := chats(srv)
	for i, r := range reqs {
		msgs := r.Request.Messages
		for k, m := range msgs {
			if m.Role != ctxwin.RoleAssistant || len(m.ToolCalls) != 1 || m.ToolCalls[0].Name != final.Name || m.ToolCalls[0].Arguments != final.Arguments {
				continue
			}
			if k+1 >= len(msgs) || msgs[k+1].Role != ctxwin.RoleTool {
				t.Fatalf("request %d: the call has no result after it", i)
			}
			// The request sheds: it ends with the message of its event.
			if !ctxwin.IsAside(msgs[len(msgs)-1]) {
				t.Fatalf("request %d carries the result but no shrink came with it: the test does not test the cut after a shrink", i)
			}
			return msgs[k+1].Content, r, srv
		}
	}
	t.Fatal("no request carries the result")
	return "", enginetest.Recorded{}, nil
}

// TestReadAfterShedKeepsAQuarter: at 16k, after a survey of 40 files,
// the model reads src/strings/strings.go (1291 lines) while the request
// stands at 82% of the usable window or more. That request sheds; the
// read is cut to the room left after the shed, not before it: it keeps at
// least a quarter of the usable window by the engine's count, or all of
// it.
func TestReadAfterShedKeepsAQuarter(t *testing.T) {
	root := t.TempDir()
	big := goSource(t, root, "strings/strings.go")
	view, req, srv := lateResult(t, root, ctxwin.ToolCall{ID: "big", Name: "read", Arguments: fmt.Sprintf(`{"path":%q}`, big)})
	whole, _ := os.ReadFile(filepath.Join(root, big))
	kept, want := srv.Tokens(view), edgeUsable/4
	t.Logf("the read keeps %d tokens (%d lines) of %d in a request of %d tokens; a quarter of usable is %d",
		kept, strings.Count(view, "\n"), srv.Tokens(string(whole)), req.PromptTokens, want)
	if kept < want && strings.Contains(view, "hit the context limit") {
		t.Errorf("the read keeps %d tokens, less than a quarter of the usable window (%d)", kept, want)
	}
	if !strings.Contains(view, "Read "+big+" with start_line") && strings.Contains(view, "hit the context limit") {
		t.Errorf("the cut does not say how to read the rest: %.300q", view)
	}
}

// TestGlobAfterShedKeepsAQuarter: the same with a glob of 464 files,
// long enough to be saved whole: the glob keeps at least as many names as
// a quarter of the usable window holds, and the cut names the saved file.
func TestGlobAfterShedKeepsAQuarter(t *testing.T) {
	root := t.TempDir()
	var names []string
	for i := range 464 {
		name := fmt.Sprintf("gen/module_%02d/subsystem/a_generated_component_with_a_rather_long_descriptive_name_%03d_impl.go", i/20, i)
		names = append(names, name)
		os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(root, name), []byte("package gen\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	view, req, srv := lateResult(t, root, ctxwin.ToolCall{ID: "glob", Name: "glob", Arguments: `{"pattern":"gen/**/*.go"}`})
	kept := 0
	for _, l := range strings.Split(view, "\n") {
		if strings.HasPrefix(l, "gen/module_") {
			kept++
		}
	}
	perName := float64(srv.Tokens(strings.Join(names, "\n")+"\n")) / float64(len(names))
	marker := regexp.MustCompile(`(?s)\n\[….*…\]\n`).FindString(view)
	want := int(float64(edgeUsable/4-srv.Tokens(marker)) / perName)
	t.Logf("the glob keeps %d names of %d (%.1f tokens each) in a request of %d tokens; a quarter of usable holds %d", kept, len(names), perName, req.PromptTokens, want)
	if kept < len(names) && kept < want {
		t.Errorf("the glob keeps %d names, fewer than the %d a quarter of the usable window holds", kept, want)
	}
	if kept < len(names) && !strings.Contains(view, "The whole output is in") {
		t.Errorf("the cut glob does not name the file that holds it whole: %q", marker)
	}
}

// TestTinyWindowNoRoomToAnswer: minimal mode on a 4096 window whose fixed
// prefix (system prompt and tool definitions, at 1.8 characters a token)
// leaves less than the floor for an answer. Nothing is sent; the error
// gives the sizes and advice true for this case: not REIKA_MINIMAL, which
// is set, and a window that holds the prefix.
func TestTinyWindowNoRoomToAnswer(t *testing.T) {
	srv := enginetest.New(enginetest.Options{Window: 4096, CharsPerToken: 1.8})
	defer srv.Close()
	a := newAgent(t, srv, t.TempDir(), agent.Settings{Minimal: true}, nil)
	res := a.Ask(context.Background(), agent.AskParams{Prompt: "What does this project do?"})
	for _, r := range chats(srv) {
		t.Errorf("a request went out with max_tokens %d (prompt %d tokens)", r.Request.MaxTokens, r.PromptTokens)
	}
	t.Log(res.Message)
	if res.Status != agent.AskError {
		t.Fatalf("the turn ended %s: %s", res.Status, res.Message)
	}
	sizes := regexp.MustCompile(`window of 4096 tokens.*takes (\d+) tokens and the task (\d+)`).FindStringSubmatch(res.Message)
	if sizes == nil {
		t.Fatalf("the message does not give the window, the prefix and the task: %s", res.Message)
	}
	prefix, _ := strconv.Atoi(sizes[1])
	task, _ := strconv.Atoi(sizes[2])
	if prefix+task+256 <= 4096 {
		t.Fatalf("setup: the prefix (%d) and the task (%d) leave the floor: the test does not test it", prefix, task)
	}
	if strings.Contains(res.Message, "REIKA_MINIMAL") {
		t.Errorf("the advice names REIKA_MINIMAL, which is set: %s", res.Message)
	}
	c := regexp.MustCompile(`llama-server -c (\d+)`).FindStringSubmatch(res.Message)
	if c == nil {
		t.Fatalf("no window advised: %s", res.Message)
	}
	w, _ := strconv.Atoi(c[1])
	if b := ctxwin.NewBudget(w, ctxwin.Reserve{}.Tokens(w)); prefix+task > b.Usable/2 || w > 4*(prefix+task)+4096 {
		t.Errorf("-c %d does not fit the prefix and the task (%d) with room for the work, or is far more than they need", w, prefix+task)
	}
}

// TestSurveyWithoutTokenizer: an 8192 window where nothing counts new text
// (no /tokenize) and code tokenizes at about 2 characters a token: a
// survey of 20 new files shrinks on almost every round, each shrink
// freeing little, and completes: each round reads something new. The
// re-read loop is still stopped there, with the file named.
func TestSurveyWithoutTokenizer(t *testing.T) {
	root := t.TempDir()
	files := goFiles(t, root, 20, 3000, 10000)
	var mu sync.Mutex
	main := 0
	srv := enginetest.New(enginetest.Options{Window: 8192, NoTokenize: true, CodeCharsPerToken: 2, Script: cycleScript(files, &main, &mu)})
	defer srv.Close()
	col := &collector{shrinkBefore: map[int]bool{}}
	a := newAgent(t, srv, root, agent.Settings{}, col)
	res := a.Ask(context.Background(), agent.AskParams{Prompt: cycleTask})
	shrinks := len(col.kinds(agent.EventShed)) + len(col.kinds(agent.EventFold))
	t.Logf("%d main requests, %d shed or fold lines: %s", main, shrinks, res.Message)
	if res.Status != agent.AskDone {
		t.Fatalf("the survey ended %s after %d requests: %s", res.Status, main, res.Message)
	}
	if shrinks < 5 {
		t.Errorf("only %d shrinks: the survey does not test the guard", shrinks)
	}
	for _, r := range chats(srv) {
		if r.Overflowed || r.Status != 200 {
			t.Errorf("request %d: overflowed %v, status %d", r.Index, r.Overflowed, r.Status)
		}
	}
}

// TestRereadLoopStoppedWithoutTokenizer is TestRereadLoopStopped on the
// same 8192 window without a tokenizer.
func TestRereadLoopStoppedWithoutTokenizer(t *testing.T) {
	root := t.TempDir()
	big := goSource(t, root, "strings/strings.go")
	small := goFiles(t, root, 30, 1500, 6000)
	var prev []ctxwin.Message
	next := 0
	srv := enginetest.New(enginetest.Options{Window: 8192, NoTokenize: true, CodeCharsPerToken: 2, Script: func(r *enginetest.Request) enginetest.Reply {
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
	if res.Status != agent.AskError || !strings.Contains(res.Message, "made no progress") || !strings.Contains(res.Message, big) {
		t.Fatalf("the re-read loop was not stopped with the file named: %+v", res)
	}
	if next >= len(small) {
		t.Errorf("stopped only after all %d other files were read", next)
	}
	t.Logf("stopped after %d requests: %s", len(chats(srv)), res.Message)
}
