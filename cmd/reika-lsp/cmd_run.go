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
	"unicode/utf8"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/approval"
	"github.com/reika-lsp/reika-lsp/agent/tools"
)

func init() {
	register(command{name: "run", summary: "run one turn of the agent in this directory, headless", run: runRun})
}

const runUsage = `usage: reika-lsp run [--approve ask|edits|all] [--mode NAME] [--continue | --session ID] "prompt"

Runs one turn of the agent in the current directory against the configured
endpoint (REIKA_BASE_URL, default http://127.0.0.1:8080/v1), printing the
transcript as it streams and the context chip after each round on stderr.

  --approve MODE  ask (default): ask before edits, commands and fetches;
                  edits: allow file edits; all: allow everything in the workspace
  --mode NAME     code (default), plan or ask (read-only tools), or a custom
                  mode of .reika/modes/NAME.md; the mode setting otherwise
  --continue      resume this directory's last session
  --session ID    resume session ID of this directory (the editors' session
                  history lists them; its log is ID.jsonl in the state dir)

With --continue or --session and no prompt, the session's last prompt is
sent again, when the model never answered it (the engine was down).

A prompt that is a slash command (/compact, /new, /save [FILE], /mode NAME,
/skills, /help, or a custom one) runs it instead; /help lists them.
`

// runRun is the run command: it parses args, runs one turn in the working
// directory and returns the exit code: 0 done; 1 when the turn or the
// agent failed, or the session log could not be written; 2 for a usage,
// settings or model configuration error; 130 cancelled.
func runRun(args []string, stdout, stderr io.Writer) int {
	opts, code, ok := parseRunArgs(args, stdout, stderr)
	if !ok {
		return code
	}
	root, err := os.Getwd()
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp run: %v\n", err)
		return 1
	}
	if err := agent.CheckMode(root, opts.settings.Mode); err != nil {
		fmt.Fprintf(stderr, "reika-lsp run: %v\n", err)
		return 2
	}
	term := newTerminal(stdout, stderr)
	logf := func(f string, a ...any) { term.log(fmt.Sprintf(f, a...)) }
	model, err := newModel(opts.settings, logf)
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp run: %v\n", err)
		return 2
	}
	a, err := agent.New(agent.Options{
		Workspace: dirWorkspace{root: root},
		Model:     model,
		Approver:  &ttyApprover{t: term, in: bufio.NewReader(os.Stdin), interactive: isTerminal(os.Stdin)},
		Events:    term,
		Settings:  opts.settings,
		Resume:    opts.resume,
		Logf:      logf,
		MCPConfig: agent.ConfigFilePath(),
	})
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp run: %v\n", err)
		return 1
	}
	if opts.session != "" {
		if err := a.ResumeSession(opts.session); err != nil {
			a.Close()
			fmt.Fprintf(stderr, "reika-lsp run: --session: %v\n", err)
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res := a.Ask(ctx, agent.AskParams{Prompt: opts.prompt, Retry: opts.prompt == ""})
	term.finish()
	return finishRun(a, res, stderr)
}

// runOptions is what the run command's arguments and the settings ask for.
type runOptions struct {
	prompt   string
	settings agent.Settings // with --approve applied
	resume   bool           // --continue
	session  string         // --session
}

// parseRunArgs reads the run command's flags and prompt, and loads the
// settings. ok false means the command ends with code: 0 after printing
// the usage for -h, 2 after printing the error to stderr.
func parseRunArgs(args []string, stdout, stderr io.Writer) (opts runOptions, code int, ok bool) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	approve := fs.String("approve", "", "")
	cont := fs.Bool("continue", false, "")
	mode := fs.String("mode", "", "")
	session := fs.String("session", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, runUsage)
			return opts, 0, false
		}
		fmt.Fprintf(stderr, "reika-lsp run: %v\n", err)
		return opts, 2, false
	}
	opts.prompt = strings.TrimSpace(strings.Join(fs.Args(), " "))
	if opts.prompt == "" && !*cont && *session == "" {
		fmt.Fprintln(stderr, `reika-lsp run: no prompt: reika-lsp run "what to do" (or --continue alone, to retry a prompt the model never answered)`)
		return opts, 2, false
	}
	settings, err := agent.LoadSettings(agent.SettingsSource{})
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp run: %v\n", err)
		return opts, 2, false
	}
	if *approve != "" {
		if *approve != agent.ApproveAsk && *approve != agent.ApproveEdits && *approve != agent.ApproveAll {
			fmt.Fprintf(stderr, "reika-lsp run: --approve: want ask, edits or all, got %q\n", *approve)
			return opts, 2, false
		}
		settings.Approve = *approve
	}
	if *mode != "" {
		if settings, err = agent.WithMode(settings, *mode, "--mode"); err != nil {
			fmt.Fprintf(stderr, "reika-lsp run: %v\n", err)
			return opts, 2, false
		}
	}
	opts.settings, opts.resume, opts.session = settings, *cont, *session
	return opts, 0, true
}

// newTerminal is a terminal printing to stdout and stderr, sized when
// stdout is a terminal.
func newTerminal(stdout, stderr io.Writer) *terminal {
	term := &terminal{out: stdout, err: stderr}
	if f, ok := stdout.(*os.File); ok {
		term.cols, term.rows, term.tty = terminalSize(f)
	}
	if f, ok := stderr.(*os.File); ok {
		_, _, term.errTTY = terminalSize(f)
	}
	return term
}

// finishRun prints the session's prompt tally and how the turn ended,
// closes the agent and returns the exit code: 0 done, 130 cancelled, 1
// failed or when the session log could not be written.
func finishRun(a *agent.Agent, res agent.AskResult, stderr io.Writer) int {
	if line := a.PromptTally().String(); line != "" {
		fmt.Fprintf(stderr, "reika-lsp run: %s\n", line)
	}
	code := 0
	switch res.Status {
	case agent.AskDone:
	case agent.AskCancelled:
		fmt.Fprintln(stderr, "reika-lsp run: cancelled")
		code = 130
	default:
		fmt.Fprintf(stderr, "reika-lsp run: %s\n", res.Message)
		if res.Session != "" {
			fmt.Fprintf(stderr, "reika-lsp run: the prompt is kept in session %s: reika-lsp run --continue \"…\" goes on from it\n", res.Session)
		}
		code = 1
	}
	// The session log is written whole before the run says it succeeded.
	if err := a.Close(); err != nil && code == 0 {
		fmt.Fprintf(stderr, "reika-lsp run: the session log could not be written: %v\n", err)
		code = 1
	}
	return code
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
	// tty is set when out is a terminal of cols columns and rows rows, on
	// which a broken reply can be erased; errTTY when err is one too.
	tty, errTTY bool
	cols, rows  int
	streamed    bool            // a streamed reply is being printed
	partial     strings.Builder // the text it streamed so far
	screen      strings.Builder // what the terminal shows since it began
	midLine     bool
}

func (t *terminal) Transcript(e agent.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch e.Kind {
	case agent.EventUser:
		return
	case agent.EventAssistant:
		if e.Delta {
			if !t.streamed {
				t.newline()
				t.partial.Reset()
				t.screen.Reset()
			}
			shown := approval.Visible(e.Text)
			fmt.Fprint(t.out, shown)
			t.partial.WriteString(e.Text)
			t.screen.WriteString(shown)
			t.streamed = true
			t.midLine = !strings.HasSuffix(e.Text, "\n")
			return
		}
		switch {
		case !t.streamed:
			t.print(e.Text)
		case e.Text != t.partial.String():
			// The stream broke and the engine was asked again: the reply
			// is this, not what streamed.
			t.replacePartial(e.Text)
		}
		t.streamed = false
		t.partial.Reset()
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
		fmt.Fprintf(t.out, "── note ──\n%s\n──────────\n", approval.Visible(strings.TrimSpace(e.Text)))
	case agent.EventShed, agent.EventFold, agent.EventInfo:
		t.newline()
		fmt.Fprintf(t.out, "· %s\n", approval.Visible(e.Text))
	case agent.EventError:
		t.newline()
		fmt.Fprintf(t.err, "error: %s\n", approval.Visible(e.Text))
	}
}

func (t *terminal) Status(agent.Status) {}

// Notice prints nothing: warnings reach the log, which run prints; folds are
// in the transcript, and errors end the run with their message.
func (t *terminal) Notice(agent.Notice) {}

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
	t.errLine(line)
}

func (t *terminal) print(text string) {
	if text != "" {
		fmt.Fprint(t.out, approval.Visible(text))
		t.midLine = !strings.HasSuffix(text, "\n")
	}
}

// replacePartial puts the whole reply in place of the broken text that
// streamed before it: erased on a terminal when it can be (it fits on the
// screen and its width is known), else followed by the reply under a line
// that says the text above it was broken.
func (t *terminal) replacePartial(reply string) {
	if n, ok := t.partialRows(); ok {
		if n > 1 {
			fmt.Fprintf(t.out, "\x1b[%dA", n-1)
		}
		fmt.Fprint(t.out, "\r\x1b[J")
		t.midLine = false
	} else {
		t.newline()
		if reply == "" {
			fmt.Fprintln(t.out, "· (the reply above broke off; it is asked for again)")
		} else {
			fmt.Fprintln(t.out, "· (the reply above broke off and was asked for again; the whole reply:)")
		}
	}
	t.print(reply)
}

// partialRows is how many rows of the terminal the streamed text (and
// what was printed below it meanwhile, such as the engine's note that it
// asks again) takes, when it is sure: plain ASCII that started a line and
// fits on the screen.
func (t *terminal) partialRows() (int, bool) {
	text := t.screen.String()
	if !t.tty || t.cols <= 0 || t.rows <= 0 {
		return 0, false
	}
	rows := 0
	for _, line := range strings.Split(text, "\n") {
		width := 0
		for _, c := range []byte(line) {
			switch {
			case c == '\t':
				width += 8 - width%8
			case c < 0x20 || c >= 0x7f:
				return 0, false // a control or non-ASCII character: width unsure
			default:
				width++
			}
		}
		rows += max(1, (width+t.cols-1)/t.cols)
	}
	if rows >= t.rows {
		return 0, false
	}
	return rows, true
}

func (t *terminal) newline() {
	if t.midLine {
		fmt.Fprintln(t.out)
		t.midLine = false
		if t.streamed {
			t.screen.WriteByte('\n')
		}
	}
}

// errLine prints a line on err, counting it as on the screen below a
// streaming reply when err is the same terminal.
func (t *terminal) errLine(line string) {
	t.newline()
	fmt.Fprintln(t.err, line)
	if t.streamed && t.errTTY {
		t.screen.WriteString(line + "\n")
	}
}

func (t *terminal) finish() {
	t.mu.Lock()
	t.newline()
	t.mu.Unlock()
}

// oneLine is s on one line for the terminal, at most n bytes (cut on a
// character), with nothing in it the terminal would act on.
func oneLine(s string, n int) string {
	s = approval.Visible(strings.Join(strings.Fields(s), " "))
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
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

func (a *ttyApprover) Approve(ctx context.Context, req approval.Request) agent.Decision {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.t.mu.Lock()
	a.t.newline()
	if req.Kind == agent.KindMCPTrust {
		return a.trust(req)
	}
	if !a.interactive {
		fmt.Fprintf(a.t.err, "denied (no terminal to ask; use --approve): %s\n", approval.Visible(req.Summary))
		a.t.mu.Unlock()
		return agent.Deny
	}
	// The whole command, as it will run (the bash tool asks for none too
	// long to show), with nothing in it that the terminal would act on.
	return a.ask(req, "Allow? [y]es, [s] for this session, [N]o: ", map[string]agent.Decision{
		"y": agent.Allow, "yes": agent.Allow, "s": agent.AllowSession, "session": agent.AllowSession})
}

// ask shows req and question, releases a.t.mu, and reads the answer: the
// decision answers names, Deny for any other line or none.
func (a *ttyApprover) ask(req approval.Request, question string, answers map[string]agent.Decision) agent.Decision {
	fmt.Fprintf(a.t.err, "\n%s\n%s\n%s", approval.Visible(req.Summary), approval.Visible(req.Detail), question)
	a.t.mu.Unlock()
	line, err := a.in.ReadString('\n')
	if err != nil {
		return agent.Deny
	}
	if d, ok := answers[strings.ToLower(strings.TrimSpace(line))]; ok {
		return d
	}
	return agent.Deny
}

// trust asks whether to start the servers of the workspace's .mcp.json,
// with the editors' answers: yes (remembered), not now, never (remembered).
// Without a terminal it is not now: no --approve answers it. a.t.mu is
// held, and released.
func (a *ttyApprover) trust(req approval.Request) agent.Decision {
	if !a.interactive {
		fmt.Fprintf(a.t.err, "not started (no terminal to ask; answer once in a terminal, or start them from your config.toml): %s\n", approval.Visible(req.Summary))
		a.t.mu.Unlock()
		return agent.Deny
	}
	return a.ask(req, "Start them? [y]es, [N]ot now, ne[v]er for this workspace: ", map[string]agent.Decision{
		"y": agent.Allow, "yes": agent.Allow, "v": agent.Never, "never": agent.Never})
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
