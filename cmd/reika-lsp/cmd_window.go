package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/engine"
	"github.com/reika-lsp/reika-lsp/agent/mcp"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

func init() {
	register(command{name: "window", summary: "show how the context window is divided", run: runWindow})
}

const windowUsage = `usage: reika-lsp window [--window N] [--reserve N] [--json]

Shows how a context window is divided: the usable window, the shed point and
target, what a fold keeps, the recap and the repo map budgets, the fixed
prefix a new session in this directory would send, part by part (system
prompt, tools, skills, instructions, mode, repo map), and a picture.

  --window N    the window in tokens (default: the configured window,
                REIKA_CONTEXT_WINDOW or the active profile, else the
                engine's at REIKA_BASE_URL, asked once without waiting)
  --reserve N   pin the generation reserve, as REIKA_MIN_GEN_TOKENS does
                (default: that variable, else 2048); a pinned reserve is
                taken as given up to half the window
  --json        print one JSON object instead
`

func runWindow(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("window", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	windowFlag := fs.String("window", "", "")
	reserveFlag := fs.String("reserve", "", "")
	asJSON := fs.Bool("json", false, "")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprint(stdout, windowUsage)
			return 0
		}
		fmt.Fprintf(stderr, "reika-lsp window: %v\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "reika-lsp window: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	settings, err := agent.LoadSettings(agent.SettingsSource{})
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp window: %v\n", err)
		return 2
	}
	window, source, err := chooseWindow(settings, *windowFlag)
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp window: %v\n", err)
		return 2
	}
	pin, err := chooseReserve(settings, *reserveFlag)
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp window: %v\n", err)
		return 2
	}
	reserve := pin.Tokens(window)
	if err := ctxwin.Validate(window, reserve); err != nil {
		fmt.Fprintf(stderr, "reika-lsp window: %v\n", err)
		return 2
	}
	b := ctxwin.NewBudget(window, reserve)
	if settings.RepoMapBudget > 0 {
		b.RepoMapChars = settings.RepoMapBudget
	}
	parts, err := prefixSplit(window, settings)
	if err != nil {
		fmt.Fprintf(stderr, "reika-lsp window: %v\n", err)
		return 2
	}
	mcpParts, reports, printMCP := windowMCP(window, settings)
	parts = withMCPParts(parts, mcpParts)
	if *asJSON {
		printWindowJSON(stdout, b, parts, reports)
		return 0
	}
	printWindow(stdout, b, source, parts)
	if pin.Capped(window) {
		fmt.Fprintf(stdout, "\nThe reserve pinned at %d is capped at half the window, as a session caps it.\n", pin.Pinned)
	}
	printMCP(stdout)
	return 0
}

// printWindowJSON prints the budget, the prefix's parts and the MCP
// servers' reports as one JSON object.
func printWindowJSON(w io.Writer, b ctxwin.Budget, parts []agent.PrefixPart, reports []mcp.Report) {
	out, _ := json.Marshal(struct {
		ctxwin.Budget
		Prefix []agent.PrefixPart `json:"prefix"`
		MCP    []mcp.Report       `json:"mcp,omitempty"`
	}{b, parts, reports})
	fmt.Fprintln(w, string(out))
}

// chooseWindow gives the window to show and where it comes from: the
// --window flag, else the settings, else the engine's.
func chooseWindow(settings agent.Settings, flagValue string) (window int, source string, err error) {
	window, source = settings.ContextWindow, describeSource(settings, "contextWindow")
	if flagValue != "" {
		if window, err = tokens("--window", flagValue); err != nil {
			return 0, "", err
		}
		source = "--window"
	}
	if window <= 0 {
		if window, source, err = engineWindow(settings); err != nil {
			return 0, "", fmt.Errorf("no window configured, and the engine did not give one (%v): pass --window N or set REIKA_CONTEXT_WINDOW", err)
		}
	}
	return window, source, nil
}

// chooseReserve gives the generation reserve: pinned by the --reserve
// flag as REIKA_MIN_GEN_TOKENS pins it, so the two agree.
func chooseReserve(settings agent.Settings, flagValue string) (ctxwin.Reserve, error) {
	pin := ctxwin.Reserve{Pinned: settings.MinGenTokens}
	if flagValue != "" {
		n, err := tokens("--reserve", flagValue)
		if err != nil {
			return pin, err
		}
		pin.Pinned = n
	}
	return pin, nil
}

// tokens parses a positive token count.
func tokens(flagName, s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a whole number of tokens", flagName, s)
	}
	if n <= 0 && flagName == "--window" {
		return 0, fmt.Errorf("--window must be a positive number of tokens, got %d", n)
	}
	if n < 0 {
		return 0, fmt.Errorf("%s must not be negative, got %d", flagName, n)
	}
	return n, nil
}

// describeSource says where a setting came from, for the user.
func describeSource(s agent.Settings, name string) string {
	switch src := s.Sources[name]; {
	case src == "env":
		return agent.EnvName(name)
	case strings.HasPrefix(src, "profile"):
		return fmt.Sprintf("[profiles.%s] in %s", s.Profile, agent.ConfigFilePath())
	case src == "":
		return "not configured"
	default:
		return src
	}
}

// engineWindow asks the engine for its window, as a session's discovery
// does, without waiting for an engine that is down or loading.
func engineWindow(s agent.Settings) (int, string, error) {
	cfg := engineConfig(s)
	cfg.DownWait = -1
	c, err := engine.New(cfg)
	if err != nil {
		return 0, "", err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	info, err := c.Info(ctx)
	if err != nil {
		return 0, "", err
	}
	if info.Window <= 0 {
		return 0, "", fmt.Errorf("%s", info.Reason)
	}
	return info.Window, fmt.Sprintf("the engine at %s (%s)", s.BaseURL, info.WindowSource), nil
}

func printWindow(w io.Writer, b ctxwin.Budget, source string, parts []agent.PrefixPart) {
	fmt.Fprintf(w, "A %s window (%d tokens, from %s) with a %d-token reserve\n\n", ctxwin.FormatTokens(b.Window), b.Window, source, b.Reserve)
	rows := []struct {
		name  string
		value int
		what  string
	}{
		{"usable", b.Usable, "window − reserve"},
		{"shed point", b.ShedPoint, "0.9 × usable: a request this large sheds old output…"},
		{"shed target", b.ShedTarget, "0.63 × usable: …down to this"},
		{"fold keeps", b.FoldKeeps, "0.3 × usable: recent rounds a fold keeps verbatim"},
		{"recap", b.Recap, "0.1 × usable: the recap of everything older"},
		{"repo map chars", b.RepoMapChars, "characters of repo map in the fixed prefix"},
	}
	for _, r := range rows {
		fmt.Fprintf(w, "  %-15s %7d   %s\n", r.name, r.value, r.what)
	}
	fmt.Fprintln(w)
	printPrefix(w, parts)
	for _, line := range strings.Split(strings.TrimRight(ctxwin.Picture(b, fixedPrefixTokens(parts), 64), "\n"), "\n") {
		fmt.Fprintln(w, "  "+line)
	}
}
