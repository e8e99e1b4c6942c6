package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/lsp"
	"github.com/reika-lsp/reika-lsp/lsp/lsptest"
)

// hangGuard bounds every wait: a test that hits it has hung.
const hangGuard = 10 * time.Second

// serve runs the server of main, in process, on a workspace holding
// files, and initializes it as Neovim does (applyEdit, progress, prompts;
// no documentChanges). Cleanup disconnects and checks that nothing is left
// running.
func serve(t *testing.T, hooks lsptest.Hooks, files map[string]string) (context.Context, *lsptest.Client, string) {
	t.Helper()
	t.Cleanup(func() { goleak.VerifyNone(t) })
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	t.Cleanup(cancel)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config(t.Logf)
	cfg.Exit = func(int) {}
	serverEnd, clientEnd := lsptest.Pipe()
	served := make(chan error, 1)
	go func() { served <- lsp.Serve(context.Background(), serverEnd, cfg) }()
	c := lsptest.Connect(clientEnd, hooks)
	t.Cleanup(func() {
		c.Disconnect()
		<-served
	})
	err = c.Call(ctx, "initialize", map[string]any{
		"rootUri": "file://" + root,
		"capabilities": map[string]any{
			"workspace": map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"resourceOperations": []string{"create"}}},
			"window":    map[string]any{"workDoneProgress": true, "showMessage": map[string]any{}},
		},
		"initializationOptions": map[string]any{"reika": map[string]any{"model": "m1"}},
	}, nil)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if err := c.Notify(ctx, "initialized", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitNote(ctx, lsp.MethodStatus, func(m lsptest.Message) bool { return strings.Contains(string(m.Params), `"model":"m1"`) }); err != nil {
		t.Fatalf("no status of the agent: %v", err)
	}
	return ctx, c, root
}

// events returns the transcript events received so far.
func events(t *testing.T, c *lsptest.Client) []agent.Event {
	t.Helper()
	var out []agent.Event
	for _, m := range c.Notes(lsp.MethodTranscript) {
		var ev agent.Event
		if err := json.Unmarshal(m.Params, &ev); err != nil {
			t.Fatalf("transcript event %s: %v", m.Params, err)
		}
		out = append(out, ev)
	}
	return out
}

// infos returns the texts of the info events received so far.
func infos(t *testing.T, c *lsptest.Client) []string {
	var out []string
	for _, ev := range events(t, c) {
		if ev.Kind == agent.EventInfo {
			out = append(out, ev.Text)
		}
	}
	return out
}

func ask(t *testing.T, ctx context.Context, c *lsptest.Client, prompt string) agent.AskResult {
	t.Helper()
	var res agent.AskResult
	if err := c.Command(ctx, lsp.CmdAsk, []any{map[string]any{"prompt": prompt}}, &res); err != nil {
		t.Fatalf("ask %q: %v", prompt, err)
	}
	return res
}

// A turn streams, reads, fills the window past 80% (said once), and
// compact folds it back.
func TestTurnFillsTheWindowAndCompactFolds(t *testing.T) {
	ctx, c, root := serve(t, lsptest.Hooks{}, nil)
	var cr agent.CompactResult
	if err := c.Command(ctx, lsp.CmdCompact, nil, &cr); err != nil || cr.Folded || cr.Message != "Nothing to fold" {
		t.Fatalf("compact before a turn = %+v, %v", cr, err)
	}
	for range 2 {
		if res := ask(t, ctx, c, "read big.txt"); res.Status != agent.AskDone || res.Session != "s1" {
			t.Fatalf("ask = %+v", res)
		}
	}
	var st agent.Status
	if err := c.Command(ctx, lsp.CmdStatus, nil, &st); err != nil || st.Text != "ctx 11k/16k (88% of 13k)" || st.Level != agent.LevelWarning || st.Model != "m1" || st.Busy {
		t.Fatalf("status after the turns = %+v, %v", st, err)
	}
	warned := 0
	for _, m := range c.Notes("window/showMessage") {
		if strings.Contains(string(m.Params), "Context at 88% of the shed point") {
			warned++
		}
	}
	if warned != 1 {
		t.Errorf("%d notices of the crossing, want 1: %v", warned, c.Notes("window/showMessage"))
	}
	if err := c.Command(ctx, lsp.CmdCompact, nil, &cr); err != nil || !cr.Folded || cr.RecapTokens != 1300 || cr.Message != "Folded 2 rounds into a 1.3k-token recap" {
		t.Fatalf("compact = %+v, %v", cr, err)
	}
	if err := c.Command(ctx, lsp.CmdStatus, nil, &st); err != nil || st.Level != agent.LevelOK {
		t.Errorf("status after the fold = %+v, %v", st, err)
	}
	path := filepath.Join(root, "saved.md")
	if err := c.Command(ctx, lsp.CmdSave, []any{map[string]any{"path": "saved.md"}}, nil); err != nil {
		t.Fatalf("save: %v", err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.HasPrefix(string(b), "# Session s1\n") || !strings.Contains(string(b), "## fold (turn 2, round 0)\n\nFolded 2 rounds") {
		t.Errorf("saved %q, %v", b, err)
	}
}

// [approve] asks the editor and tells the answer; [edit] writes through
// the editor; [read] shows what the tools read, the edit included.
func TestApproveEditRead(t *testing.T) {
	edits := make(chan string, 1)
	hooks := lsptest.Hooks{
		ShowMessageRequest: func(json.RawMessage) (any, error) {
			return map[string]string{"title": lsp.ActionAllowSession}, nil
		},
		ApplyEdit: func(p json.RawMessage) (any, error) {
			edits <- string(p)
			return map[string]bool{"applied": true}, nil
		},
	}
	ctx, c, _ := serve(t, hooks, map[string]string{"a.txt": "alpha\nbeta\n"})
	ask(t, ctx, c, `[approve] [edit][{"path":"a.txt","old":"alpha","new":"ALPHA"},{"path":"a.txt","old":"gamma","new":"G"}]`)
	ask(t, ctx, c, "[read]a.txt")
	want := []string{
		"approval: Allow for this session",
		"edit a.txt: applied",
		`edit a.txt: "gamma" is not in it`,
		`read a.txt: "ALPHA\nbeta\n"`,
	}
	if got := infos(t, c); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("info events:\n got %q\nwant %q", got, want)
	}
	if e := <-edits; !strings.Contains(e, `"newText":"ALPHA"`) {
		t.Errorf("applyEdit %s", e)
	}
}

// [wait] runs until reika.cancel stops it.
func TestWaitUntilCancelled(t *testing.T) {
	ctx, c, _ := serve(t, lsptest.Hooks{}, nil)
	var res agent.AskResult
	done := c.Go(ctx, "workspace/executeCommand", map[string]any{"command": lsp.CmdAsk, "arguments": []any{"wait [wait]"}}, &res)
	if _, err := c.WaitNote(ctx, lsp.MethodStatus, func(m lsptest.Message) bool { return strings.Contains(string(m.Params), `"busy":true`) }); err != nil {
		t.Fatal(err)
	}
	var cancelled struct{ Cancelled bool }
	if err := c.Command(ctx, lsp.CmdCancel, nil, &cancelled); err != nil || !cancelled.Cancelled {
		t.Fatalf("cancel = %+v, %v", cancelled, err)
	}
	if err := <-done; err != nil || res.Status != agent.AskCancelled {
		t.Fatalf("ask = %+v, %v", res, err)
	}
	if got := infos(t, c); len(got) != 1 || got[0] != "Turn cancelled" {
		t.Errorf("info events %q", got)
	}
}

// A selection is shown with its lines and text, as the server read it.
func TestSelection(t *testing.T) {
	ctx, c, root := serve(t, lsptest.Hooks{}, map[string]string{"main.txt": "alpha beta\ngamma délta\nend\n"})
	var res agent.AskResult
	err := c.Command(ctx, lsp.CmdAsk, []any{map[string]any{
		"prompt": "explain this",
		"uri":    "file://" + filepath.Join(root, "main.txt"),
		"range":  map[string]any{"start": map[string]int{"line": 0, "character": 6}, "end": map[string]int{"line": 1, "character": 8}},
	}}, &res)
	if err != nil {
		t.Fatal(err)
	}
	evs := events(t, c)
	if len(evs) == 0 || evs[0].Text != "explain this\n[selection main.txt lines 1-2: \"beta\\ngamma dé\"]" {
		t.Errorf("user event %+v", evs)
	}
}
