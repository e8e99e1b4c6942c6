package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Slash commands. A prompt is a command when its first word is "/" and a
// name of lowercase letters, digits, "-", "_" and ":" — no other "/" and
// no "." — so that "/usr/bin/env is missing" or "/README.md says…" are
// prompts. A command the agent does not know is refused with the list of
// commands rather than sent to the model; to send a prompt that starts
// with such a word, put anything before the slash. The agent runs them, so
// `reika-lsp run` and both editors have the same ones: the built-in ones
// below, and custom ones from Markdown files whose body is the prompt
// ($ARGUMENTS replaced by what follows the name), as Claude Code's.

var slashWord = regexp.MustCompile(`^/([a-z0-9][a-z0-9:_-]*)(?:\s+|$)`)

// parseSlash splits a command prompt into its name and arguments; ok is
// false for a prompt that is not a command.
func parseSlash(prompt string) (name, args string, ok bool) {
	prompt = strings.TrimSpace(prompt)
	m := slashWord.FindStringSubmatch(prompt)
	if m == nil {
		return "", "", false
	}
	return m[1], strings.TrimSpace(prompt[len(m[0]):]), true
}

// Command is one slash command, as reika.commands lists it for completion.
type Command struct {
	Name         string `json:"name"` // without the slash
	Description  string `json:"description"`
	ArgumentHint string `json:"argumentHint,omitempty"`
	// Source is the file of a custom command, "" for a built-in one.
	Source string `json:"source,omitempty"`
	body   string
}

var builtinCommands = []Command{
	{Name: "compact", Description: "fold the conversation now into a recap (after a note round)"},
	{Name: "new", Description: "start a new session"},
	{Name: "save", Description: "save the whole conversation as Markdown", ArgumentHint: "[FILE]"},
	{Name: "mode", Description: "show the modes, or switch to one from the next request", ArgumentHint: "[NAME]"},
	{Name: "skills", Description: "list the skills found, and what the prefix lists"},
	{Name: "help", Description: "list the commands, modes and skills"},
}

// commandDirs are where custom commands live, searched in order: the
// workspace's .reika/commands and .claude/commands, then the user's
// $XDG_CONFIG_HOME/reika/commands. A file in a subdirectory is named
// "DIR:NAME".
func commandDirs(root string) []string {
	dirs := []string{filepath.Join(root, ".reika", "commands"), filepath.Join(root, ".claude", "commands")}
	if c := configDir(); c != "" {
		dirs = append(dirs, filepath.Join(c, "commands"))
	}
	return dirs
}

// findCommands lists the built-in commands, then the custom ones by name.
// A custom command that cannot be read, or takes a built-in's name, is a
// problem.
func findCommands(root string) (cmds []Command, problems []string) {
	cmds = append(cmds, builtinCommands...)
	seen := map[string]bool{}
	for _, c := range builtinCommands {
		seen[c.Name] = true
	}
	var custom []Command
	for _, dir := range commandDirs(root) {
		filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
				return nil
			}
			rel, _ := filepath.Rel(dir, path)
			name := strings.ReplaceAll(filepath.ToSlash(strings.TrimSuffix(rel, ".md")), "/", ":")
			shown := shownPath(root, path)
			c, err := loadCommand(path, name)
			switch {
			case !slashWord.MatchString("/" + name):
				problems = append(problems, fmt.Sprintf("%s: /%s is not a command name (lowercase letters, digits, -, _)", shown, name))
			case err != nil:
				problems = append(problems, fmt.Sprintf("%s: %v", shown, err))
			case seen[name]:
				problems = append(problems, fmt.Sprintf("%s: /%s is already a command; this one is not used", shown, name))
			default:
				seen[name] = true
				c.Source = shown
				custom = append(custom, c)
			}
			return nil
		})
	}
	sort.SliceStable(custom, func(i, j int) bool { return custom[i].Name < custom[j].Name })
	return append(cmds, custom...), problems
}

// loadCommand reads a custom command's file.
func loadCommand(path, name string) (Command, error) {
	c := Command{Name: name}
	data, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	fm, body, err := parseFrontmatter(data)
	if err != nil {
		return c, err
	}
	c.body = strings.TrimSpace(body)
	if c.body == "" {
		return c, fmt.Errorf("the command has no prompt (the file's body is empty)")
	}
	c.Description, c.ArgumentHint = oneLine(fm.Description, 200), oneLine(fm.ArgumentHint, 80)
	if c.Description == "" {
		c.Description = oneLine(c.body, 80)
	}
	return c, nil
}

var positional = regexp.MustCompile(`\$([1-9])`)

// expand is a custom command's prompt: its body with $ARGUMENTS replaced
// by args and $1…$9 by its words; args the body does not take are added
// on a line of their own, as Claude Code does.
func (c Command) expand(args string) string {
	words := strings.Fields(args)
	takes := strings.Contains(c.body, "$ARGUMENTS") || positional.MatchString(c.body)
	out := strings.ReplaceAll(c.body, "$ARGUMENTS", args)
	out = positional.ReplaceAllStringFunc(out, func(m string) string {
		if i := int(m[1] - '1'); i < len(words) {
			return words[i]
		}
		return ""
	})
	if !takes && args != "" {
		out += "\n\nARGUMENTS: " + args
	}
	return out
}

// Commands lists the slash commands with their descriptions, for the
// editors' completion (reika.commands).
func (a *Agent) Commands() []Command {
	cmds, _ := findCommands(a.opts.Workspace.Root())
	return cmds
}

// slashPrompt runs p's command when p is one (see slash).
func (a *Agent) slashPrompt(ctx context.Context, p *AskParams) (AskResult, bool) {
	name, args, ok := parseSlash(p.Prompt)
	if !ok {
		return AskResult{}, false
	}
	return a.slash(ctx, name, args, p)
}

// slash runs the command of a prompt. handled is false for a custom
// command, whose prompt p now holds for the turn to run.
func (a *Agent) slash(ctx context.Context, name, args string, p *AskParams) (res AskResult, handled bool) {
	switch name {
	case "compact":
		return a.slashCompact(ctx), true
	case "new":
		id, err := a.NewSession()
		if err != nil {
			return a.slashFailed(err.Error()), true
		}
		return a.say(fmt.Sprintf("Started a new session (%s) in mode %s.", id, a.currentMode())), true
	case "save":
		path, err := a.Save(args)
		if err != nil {
			return a.slashFailed("Could not save the conversation: " + err.Error()), true
		}
		return a.say("Saved the conversation to " + path), true
	case "mode":
		return a.slashMode(args), true
	case "skills":
		return a.say(a.skillsText()), true
	case "help":
		return a.say(a.helpText()), true
	}
	cmds, _ := findCommands(a.opts.Workspace.Root())
	for _, c := range cmds {
		if c.Name == name && c.Source != "" {
			p.Prompt = c.expand(args)
			return AskResult{}, false
		}
	}
	return a.slashFailed(fmt.Sprintf("There is no command /%s.\n%s", name, commandList(cmds))), true
}

// slashCompact is /compact.
func (a *Agent) slashCompact(ctx context.Context) AskResult {
	if a.Status().Busy {
		return a.slashFailed("a turn is already running; wait for it to end or cancel it")
	}
	res := a.Compact(ctx)
	if res.Folded {
		// The fold is in the transcript already.
		return AskResult{Session: a.sessionID(), Status: AskDone, Message: res.Message}
	}
	return a.say(res.Message)
}

// slashMode is /mode [NAME].
func (a *Agent) slashMode(args string) AskResult {
	root := a.opts.Workspace.Root()
	if args == "" {
		modes, problems := findModes(root)
		cur := a.currentMode()
		var b strings.Builder
		b.WriteString("Modes (switch with /mode NAME):\n")
		for _, m := range modes {
			mark := " "
			if m.Name == cur {
				mark = "*"
			}
			fmt.Fprintf(&b, "%s %s — %s\n", mark, m.Name, m.Description)
		}
		for _, p := range problems {
			fmt.Fprintf(&b, "  not used: %s\n", p)
		}
		return a.say(strings.TrimRight(b.String(), "\n"))
	}
	m, err := a.setMode(args)
	if err != nil {
		return a.slashFailed(err.Error())
	}
	a.switchIdle()
	return a.say(fmt.Sprintf("Mode %s (%s) from the next request.", m.Name, m.Description))
}

// say shows a command's output in the transcript and returns it.
func (a *Agent) say(text string) AskResult {
	a.mu.Lock()
	ev := Event{Kind: EventInfo, Text: text, Turn: a.turn.count}
	if a.sess != nil {
		ev.Session = a.sess.id
	}
	a.mu.Unlock()
	a.events.Transcript(ev)
	return AskResult{Session: ev.Session, Status: AskDone, Message: text}
}

// slashFailed is a command that could not run.
func (a *Agent) slashFailed(text string) AskResult {
	return AskResult{Session: a.sessionID(), Status: AskError, Message: text}
}

// commandList lists cmds, one a line.
func commandList(cmds []Command) string {
	var b strings.Builder
	b.WriteString("The commands are:\n")
	for _, c := range cmds {
		name := "/" + c.Name
		if c.ArgumentHint != "" {
			name += " " + c.ArgumentHint
		}
		fmt.Fprintf(&b, "  %-22s %s", name, c.Description)
		if c.Source != "" {
			fmt.Fprintf(&b, " (%s)", c.Source)
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// helpText is /help.
func (a *Agent) helpText() string {
	root := a.opts.Workspace.Root()
	cmds, problems := findCommands(root)
	var b strings.Builder
	b.WriteString(commandList(cmds))
	for _, p := range problems {
		fmt.Fprintf(&b, "\n  not used: %s", p)
	}
	modes, _ := findModes(root)
	names := make([]string, len(modes))
	for i, m := range modes {
		names[i] = m.Name
	}
	fmt.Fprintf(&b, "\nMode: %s (of %s; /mode NAME switches).", a.currentMode(), strings.Join(names, ", "))
	b.WriteString("\nA prompt is a command when its first word is / and a name of lowercase letters, digits, -, _ and : (no other / or .); anything else is sent to the model.")
	return b.String()
}

// skillsText is /skills.
func (a *Agent) skillsText() string {
	root := a.opts.Workspace.Root()
	set := findSkills(root)
	if len(set.skills) == 0 && len(set.problems) == 0 {
		return "No skills found. A skill is a folder with a SKILL.md (frontmatter name and description, then the instructions) in .reika/skills, .agents/skills or .claude/skills of the workspace, or in " +
			filepath.Join(configDirShown(root), "skills") + "."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Skills (%d):\n", len(set.skills))
	for _, sk := range set.skills {
		fmt.Fprintf(&b, "  %s — %s (%s)\n", sk.Name, oneLine(sk.Description, 160), sk.Shown)
	}
	for _, p := range set.problems {
		fmt.Fprintf(&b, "  not used: %s\n", p)
	}
	a.mu.Lock()
	sess, window, minimal := a.sess, 0, a.set.Minimal
	if a.eng.info != nil {
		window = a.eng.info.Window
	}
	a.mu.Unlock()
	switch {
	case minimal:
		b.WriteString("Minimal mode: the prefix lists no skills.")
	case sess != nil:
		_, shown := sess.offer.skills.prefixBlock(SkillListChars(window))
		fmt.Fprintf(&b, "This session's prefix lists %d of its %d (the list is bounded to %d characters).", shown, len(sess.offer.skills.skills), SkillListChars(window))
	default:
		_, shown := set.prefixBlock(SkillListChars(window))
		fmt.Fprintf(&b, "A new session's prefix would list %d (the list is bounded to %d characters).", shown, SkillListChars(window))
	}
	return b.String()
}

// configDirShown is $XDG_CONFIG_HOME/reika as the user reads it.
func configDirShown(root string) string {
	c := configDir()
	if c == "" {
		return "$XDG_CONFIG_HOME/reika"
	}
	return shownPath(root, c)
}
