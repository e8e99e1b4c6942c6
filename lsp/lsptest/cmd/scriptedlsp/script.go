package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/approval"
	"github.com/reika-lsp/reika-lsp/agent/tools"
	"github.com/reika-lsp/reika-lsp/ctxwin"
	"github.com/reika-lsp/reika-lsp/lsp/lsptest/scripted"
)

// The script of one turn (reika.ask): the user event (with the attached
// selection, if any); a streamed assistant message; a read of big.txt,
// after which the window is past 80% of the shed point (the status at level
// warning, and one window/showMessage as it crosses); a final answer. A
// prompt can steer it:
//
//	[approve]   ask to run `go test ./...` (window/showMessageRequest) and
//	            tell the answer in an info event ("approval: Allow")
//	[edit]EDITS for each {"path", "old", "new"} of the JSON list EDITS (the
//	            rest of the prompt): read path from the workspace (open buffers
//	            win), replace the first old with new and write it back through
//	            the server (workspace/applyEdit), telling the outcome in an
//	            info event ("edit a.txt: applied")
//	[read]PATH  read PATH (the rest of the prompt) from the workspace and
//	            show it, quoted, in an info event ("read a.txt: \"...\"")
//	[wait]      wait until the turn is cancelled
//	[crash]     exit with status 3 at once
//
// reika.compact with a turn behind it sends a note and a fold event and
// brings the window back below 80%; without one, it has nothing to fold.
// The window is 16000 tokens unless the editor's settings say otherwise.
const (
	window      = 16000
	model       = "scripted-model"
	startSize   = 1200
	fullSize    = 11000 // 88% of the shed point of 16000
	foldedSize  = 2600
	recapTokens = 1300
)

// newAgent is Config.NewAgent: a scripted agent running the script.
func newAgent(opts agent.Options) (agent.Service, error) {
	a := scripted.New(opts)
	a.Window, a.Model = window, model
	a.SavePath = filepath.Join(os.TempDir(), "scriptedlsp-session.md")
	a.Turn, a.Fold, a.Write = turn, fold, writeMarkdown
	a.Resize(startSize)
	return a, nil
}

// turn is the script of one reika.ask.
func turn(ctx context.Context, a *scripted.Agent, p agent.AskParams) agent.AskResult {
	if strings.Contains(p.Prompt, "[crash]") {
		os.Exit(3)
	}
	ev := a.Opts.Events
	ev.Status(a.Status()) // busy
	a.Emit(agent.Event{Round: 1, Kind: agent.EventUser, Text: userText(p)})
	if strings.Contains(p.Prompt, "[wait]") {
		<-ctx.Done()
	}
	if ctx.Err() != nil {
		a.Emit(agent.Event{Round: 1, Kind: agent.EventInfo, Text: "Turn cancelled"})
		return agent.AskResult{Session: a.Session(), Status: agent.AskCancelled}
	}
	for _, chunk := range []string{"Let me read ", "the file."} {
		a.Emit(agent.Event{Round: 1, Kind: agent.EventAssistant, Text: chunk, Delta: true})
	}
	a.Emit(agent.Event{Round: 1, Kind: agent.EventAssistant, Text: "Let me read the file."})
	if strings.Contains(p.Prompt, "[approve]") {
		a.Emit(agent.Event{Round: 1, Kind: agent.EventInfo, Text: "approval: " + approve(ctx, a)})
	}
	if _, edits, ok := strings.Cut(p.Prompt, "[edit]"); ok {
		for _, line := range edit(ctx, a, edits) {
			a.Emit(agent.Event{Round: 1, Kind: agent.EventInfo, Text: line})
		}
	}
	if _, path, ok := strings.Cut(p.Prompt, "[read]"); ok {
		a.Emit(agent.Event{Round: 1, Kind: agent.EventInfo, Text: read(a, strings.TrimSpace(path))})
	}
	a.Emit(agent.Event{Round: 1, Kind: agent.EventToolCall, Tool: "read", Args: json.RawMessage(`{"path":"big.txt"}`)})
	a.Emit(agent.Event{Round: 1, Kind: agent.EventToolResult, Tool: "read",
		Text: "big.txt lines 1-400 of 400\n1\tline one\n2\tline two\n3\tline three\n4\tline four", Tokens: 9800})
	before := a.Status().Level
	st := a.Resize(fullSize)
	ev.Status(st)
	if st.Level == agent.LevelWarning && before != agent.LevelWarning {
		ev.Notice(agent.Notice{Level: agent.LevelWarning, Text: fmt.Sprintf("Context at %d%% of the shed point", *st.Percent)})
	}
	ev.Progress(agent.Progress{Turn: a.Turns(), Round: 1, Text: "round 1 · read big.txt · " + st.Text})
	a.Emit(agent.Event{Round: 2, Kind: agent.EventAssistant, Text: "The file holds 400 numbered lines."})
	return agent.AskResult{Session: a.Session(), Status: agent.AskDone}
}

// userText is the text of the user event: the prompt, and the attached
// selection on a line of its own.
func userText(p agent.AskParams) string {
	at := p.Attachment
	if at == nil {
		return p.Prompt
	}
	return fmt.Sprintf("%s\n[selection %s lines %d-%d: %q]", p.Prompt, at.Path, at.StartLine, at.EndLine, at.Text)
}

// approve asks to run a command, as the bash tool does, and names the
// answer.
func approve(ctx context.Context, a *scripted.Agent) string {
	d := a.Opts.Approver.Approve(ctx, approval.Request{
		Tool: tools.NameBash, Kind: "command", Summary: "run `go test ./...`", Detail: "go test ./...",
	})
	switch d {
	case agent.Allow:
		return "Allow"
	case agent.AllowSession:
		return "Allow for this session"
	}
	return "Deny"
}

// edit carries out the edits of an [edit] prompt and says how each went.
func edit(ctx context.Context, a *scripted.Agent, spec string) []string {
	var edits []struct {
		Path string `json:"path"`
		Old  string `json:"old"`
		New  string `json:"new"`
	}
	if err := json.Unmarshal([]byte(spec), &edits); err != nil {
		return []string{"edit: not a JSON list of {path, old, new}: " + err.Error()}
	}
	ws := a.Opts.Workspace
	var out []string
	for _, e := range edits {
		path := filepath.Join(ws.Root(), e.Path)
		old, err := ws.ReadFile(path)
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("edit %s: %v", e.Path, err))
		case !strings.Contains(string(old), e.Old):
			out = append(out, fmt.Sprintf("edit %s: %q is not in it", e.Path, e.Old))
		default:
			content := strings.Replace(string(old), e.Old, e.New, 1)
			if err := ws.WriteFile(ctx, path, []byte(content)); err != nil {
				out = append(out, fmt.Sprintf("edit %s: not applied: %v", e.Path, err))
			} else {
				out = append(out, fmt.Sprintf("edit %s: applied", e.Path))
			}
		}
	}
	return out
}

// read shows a file of the workspace as the tools see it.
func read(a *scripted.Agent, rel string) string {
	ws := a.Opts.Workspace
	b, err := ws.ReadFile(filepath.Join(ws.Root(), rel))
	if err != nil {
		return fmt.Sprintf("read %s: %v", rel, err)
	}
	return fmt.Sprintf("read %s: %q", rel, b)
}

// fold is the script of reika.compact.
func fold(_ context.Context, a *scripted.Agent) agent.CompactResult {
	ev := a.Opts.Events
	turns := a.Turns()
	if turns == 0 {
		ev.Notice(agent.Notice{Level: agent.LevelInfo, Text: "Nothing to fold"})
		return agent.CompactResult{Message: "Nothing to fold"}
	}
	rounds := "rounds"
	if turns == 1 {
		rounds = "round"
	}
	msg := fmt.Sprintf("Folded %d %s into a %s-token recap", turns, rounds, ctxwin.FormatTokens(recapTokens))
	a.Emit(agent.Event{Kind: agent.EventNote, Text: "Established: big.txt holds 400 numbered lines."})
	a.Emit(agent.Event{Kind: agent.EventFold, Text: msg, Tokens: recapTokens})
	ev.Status(a.Resize(foldedSize))
	ev.Notice(agent.Notice{Level: agent.LevelInfo, Text: msg})
	return agent.CompactResult{Folded: true, RecapTokens: recapTokens, Message: msg}
}

// writeMarkdown is reika.save: the session's events as Markdown.
func writeMarkdown(a *scripted.Agent, path string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Session %s\n", a.Session())
	for _, ev := range a.Events() {
		fmt.Fprintf(&b, "\n## %s (turn %d, round %d)\n\n%s\n", ev.Kind, ev.Turn, ev.Round, ev.Text)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("writing the conversation: %w", err)
	}
	return nil
}
