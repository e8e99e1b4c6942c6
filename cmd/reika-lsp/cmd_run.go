package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/tools"
)

func init() {
	register(command{name: "run", summary: "run one turn of the agent in this directory, headless", run: runRun})
}

const runUsage = `usage: reika-lsp run [--approve ask|edits|all] [--continue] "prompt"

Runs one turn of the agent in the current directory against the configured
endpoint (REIKA_BASE_URL, default http://127.0.0.1:8080/v1), printing the
transcript as it streams and the context chip after each round on stderr.

  --approve MODE  ask (default): ask before edits, commands and fetches;
                  edits: allow file edits; all: allow everything in the workspace
  --continue      resume this directory's last session
`

func runRun(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	approve := fs.String("approve", "", "")
	cont := fs.Bool("continue", false, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, runUsage)
			return 0
		}
		fmt.Fprintf(stderr, "reika-lsp run: %v\n", err)
		return 2
	}
	prompt := strings.TrimSpace(strings.Join(fs.Args(), " "))
	if prompt == "" {
		fmt.Fprintln(stderr, `reika-lsp run: no prompt: reika-lsp run "what to do"`)
		return 2
	}
	settings, err := agent.LoadSettings(agent.SettingsSource{})
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp run: %v\n", err)
		return 2
	}
	if *approve != "" {
		if *approve != agent.ApproveAsk && *approve != agent.ApproveEdits && *approve != agent.ApproveAll {
			fmt.Fprintf(stderr, "reika-lsp run: --approve: want ask, edits or all, got %q\n", *approve)
			return 2
		}
		settings.Approve = *approve
	}
	root, err := os.Getwd()
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp run: %v\n", err)
		return 1
	}
	term := &terminal{out: stdout, err: stderr}
	logf := func(f string, a ...any) { term.log(fmt.Sprintf(f, a...)) }
	model, err := newModel(settings, logf)
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp run: %v\n", err)
		return 2
	}
	a, err := agent.New(agent.Options{
		Workspace: dirWorkspace{root: root},
		Model:     model,
		Approver:  &ttyApprover{t: term, in: bufio.NewReader(os.Stdin), interactive: isTerminal(os.Stdin)},
		Events:    term,
		Settings:  settings,
		Resume:    *cont,
		Logf:      logf,
	})
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp run: %v\n", err)
		return 1
	}
	defer a.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res := a.Ask(ctx, agent.AskParams{Prompt: prompt})
	term.finish()
	switch res.Status {
	case agent.AskDone:
		return 0
	case agent.AskCancelled:
		fmt.Fprintln(stderr, "reika-lsp run: cancelled")
		return 130
	default:
		fmt.Fprintf(stderr, "reika-lsp run: %s\n", res.Message)
		return 1
	}
}

// dirWorkspace is a directory on disk.
type dirWorkspace struct {
	tools.DiskFiles
	root string
}

func (w dirWorkspace) Root() string { return w.root }

// terminal prints the transcript as it streams.
type terminal struct {
	mu       sync.Mutex
	out, err io.Writer
	streamed bool // a streamed reply is being printed
	midLine  bool
}

func (t *terminal) Transcript(e agent.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch e.Kind {
	case agent.EventUser:
		return
	case agent.EventAssistant:
		if e.Delta {
			fmt.Fprint(t.out, e.Text)
			t.streamed = true
			t.midLine = !strings.HasSuffix(e.Text, "\n")
			return
		}
		if !t.streamed && e.Text != "" {
			fmt.Fprint(t.out, e.Text)
			t.midLine = !strings.HasSuffix(e.Text, "\n")
		}
		t.streamed = false
		t.newline()
	case agent.EventReasoning:
		if !e.Delta && e.Text != "" {
			t.newline()
			fmt.Fprintf(t.out, "  (thinking: %s)\n", oneLine(e.Text, 160))
		}
	case agent.EventToolCall:
		t.newline()
		fmt.Fprintf(t.out, "▸ %s %s\n", e.Tool, oneLine(string(e.Args), 160))
	case agent.EventToolResult:
		first, _, _ := strings.Cut(strings.TrimSpace(e.Text), "\n")
		fmt.Fprintf(t.out, "  ↳ %s (%d lines, ~%d tokens)\n", oneLine(first, 120), strings.Count(e.Text, "\n")+1, e.Tokens)
	case agent.EventNote:
		t.newline()
		fmt.Fprintf(t.out, "── note ──\n%s\n──────────\n", strings.TrimSpace(e.Text))
	case agent.EventShed, agent.EventFold, agent.EventInfo:
		t.newline()
		fmt.Fprintf(t.out, "· %s\n", e.Text)
	case agent.EventError:
		t.newline()
		fmt.Fprintf(t.err, "error: %s\n", e.Text)
	}
}

func (t *terminal) Status(agent.Status) {}

func (t *terminal) Notice(n agent.Notice) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n.Level != agent.LevelWarning {
		return // folds are in the transcript, and errors end the run with their message
	}
	t.newline()
	fmt.Fprintf(t.err, "%s: %s\n", n.Level, n.Text)
}

// Progress prints the chip after each round.
func (t *terminal) Progress(p agent.Progress) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.newline()
	fmt.Fprintf(t.err, "[%s]\n", p.Text)
}

func (t *terminal) log(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.newline()
	fmt.Fprintln(t.err, line)
}

func (t *terminal) newline() {
	if t.midLine {
		fmt.Fprintln(t.out)
		t.midLine = false
	}
}

func (t *terminal) finish() {
	t.mu.Lock()
	t.newline()
	t.mu.Unlock()
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// ttyApprover asks on the terminal; without one it denies.
type ttyApprover struct {
	mu          sync.Mutex
	t           *terminal
	in          *bufio.Reader
	interactive bool
}

func (a *ttyApprover) Approve(ctx context.Context, req tools.Approval) agent.Decision {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.t.mu.Lock()
	a.t.newline()
	if !a.interactive {
		fmt.Fprintf(a.t.err, "denied (no terminal to ask; use --approve): %s\n", req.Summary)
		a.t.mu.Unlock()
		return agent.Deny
	}
	detail := req.Detail
	if len(detail) > 2000 {
		detail = detail[:2000] + "\n…"
	}
	fmt.Fprintf(a.t.err, "\n%s\n%s\nAllow? [y]es, [s] for this session, [N]o: ", req.Summary, detail)
	a.t.mu.Unlock()
	line, err := a.in.ReadString('\n')
	if err != nil {
		return agent.Deny
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return agent.Allow
	case "s", "session":
		return agent.AllowSession
	}
	return agent.Deny
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
