package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/reika-lsp/reika-lsp/agent/tools"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// A mode is which tools a session offers the model and what the system
// prompt adds: code (every tool, nothing added: the default), plan and ask
// (read-only tools), and the workspace's own from .reika/modes/NAME.md
// (or the user's from $XDG_CONFIG_HOME/reika/modes/NAME.md), whose
// frontmatter gives a description and the tools allowed and whose body is
// added to the system prompt. The tools sent to the engine are exactly the
// mode's; a subagent gets its session's, less the subagent tool. A switch
// mid-session is one change of the fixed prefix, made at the next request
// and said in the transcript.

// Built-in mode names.
const (
	ModeCode = "code"
	ModePlan = "plan"
	ModeAsk  = "ask"
)

// Mode is one mode.
type Mode struct {
	Name        string
	Description string
	// Tools are the names of the tools the mode allows; nil allows every
	// tool. A name ending in "*" allows every tool it starts (say
	// "mcp__github__*").
	Tools []string
	// Prompt is added to the system prompt; "" adds nothing.
	Prompt string
	// Source is the file a custom mode came from.
	Source string
}

// readOnlyTools are the tools of plan and ask: reading the workspace and
// the web (within the approval level), and skills.
var readOnlyTools = []string{tools.NameRead, tools.NameGrep, tools.NameGlob, tools.NameFetchURL, NameSkill}

var builtinModes = []Mode{
	{Name: ModeCode, Description: "work on the code with every tool (the default)"},
	{Name: ModePlan, Description: "investigate read-only and end with a plan to hand to code mode", Tools: readOnlyTools,
		Prompt: "You are in plan mode: you can read and search the workspace but not change it, and you must not try to. " +
			"Investigate what the task needs, then end your answer with a plan the user can hand to code mode: " +
			"numbered steps, each naming the files and what changes in them, and how to check the result."},
	{Name: ModeAsk, Description: "answer questions about the code, read-only", Tools: readOnlyTools,
		Prompt: "You are in ask mode: answer the user's questions about the code, reading and searching the workspace as needed. " +
			"You cannot change files or run commands; when a change would help, describe it instead."},
}

// modeName is what a mode's name may be: lowercase letters, digits and
// hyphens (it is a file name and a word of /mode).
var modeName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// claudeTools maps Claude Code's tool names, which its agents' and
// commands' frontmatter use, to ours.
var claudeTools = map[string]string{
	"read": tools.NameRead, "write": tools.NameWrite, "edit": tools.NameEdit, "multiedit": tools.NameEdit,
	"bash": tools.NameBash, "grep": tools.NameGrep, "glob": tools.NameGlob, "ls": tools.NameGlob,
	"webfetch": tools.NameFetchURL, "task": tools.NameSubagent, "skill": NameSkill,
}

// modeDirs are where custom modes live: the workspace's, then the user's.
func modeDirs(root string) []string {
	dirs := []string{filepath.Join(root, ".reika", "modes")}
	if c := configDir(); c != "" {
		dirs = append(dirs, filepath.Join(c, "modes"))
	}
	return dirs
}

// findModes lists the modes: the built-in ones, then the custom ones by
// name. A custom mode that cannot be used is a problem, not a failure.
func findModes(root string) (modes []Mode, problems []string) {
	modes = append(modes, builtinModes...)
	seen := map[string]bool{ModeCode: true, ModePlan: true, ModeAsk: true}
	for _, dir := range modeDirs(root) {
		names, _ := filepath.Glob(filepath.Join(dir, "*.md"))
		sort.Strings(names)
		for _, path := range names {
			m, err := loadMode(path)
			shown := shownPath(root, path)
			switch {
			case err != nil:
				problems = append(problems, fmt.Sprintf("%s: %v", shown, err))
			case seen[m.Name]:
				problems = append(problems, fmt.Sprintf("%s: mode %q is already defined; this one is not used", shown, m.Name))
			default:
				seen[m.Name] = true
				m.Source = shown
				modes = append(modes, m)
			}
		}
	}
	return modes, problems
}

// loadMode reads a custom mode's file.
func loadMode(path string) (Mode, error) {
	m := Mode{Name: strings.TrimSuffix(filepath.Base(path), ".md")}
	if !modeName.MatchString(m.Name) {
		return m, fmt.Errorf("a mode's name is lowercase letters, digits, - and _; rename the file")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return m, err
	}
	fm, body, err := parseFrontmatter(data)
	if err != nil {
		return m, err
	}
	m.Description = oneLine(fm.Description, 200)
	m.Prompt = strings.TrimSpace(body)
	list := fm.Tools
	if list == nil {
		list = fm.AllowedTools
	}
	if list != nil {
		m.Tools = []string{}
		for _, t := range list {
			m.Tools = append(m.Tools, toolName(t))
		}
	}
	return m, nil
}

// toolName is our name of a tool a mode names: ours as they are, Claude
// Code's mapped.
func toolName(name string) string {
	if ours, ok := claudeTools[strings.ToLower(name)]; ok {
		return ours
	}
	return name
}

// resolveMode is the mode named name ("" is code).
func resolveMode(root, name string) (Mode, error) {
	if name == "" {
		name = ModeCode
	}
	modes, problems := findModes(root)
	var names []string
	for _, m := range modes {
		if m.Name == name {
			return m, nil
		}
		names = append(names, m.Name)
	}
	msg := fmt.Sprintf("there is no mode %q; the modes are %s (custom ones go in .reika/modes/NAME.md)", name, strings.Join(names, ", "))
	for _, p := range problems {
		if strings.Contains(p, "/"+name+".md") {
			msg += "; " + p
		}
	}
	return Mode{}, fmt.Errorf("%s", msg)
}

// allows reports whether the mode offers the tool named name.
func (m Mode) allows(name string) bool {
	if m.Tools == nil {
		return true
	}
	for _, t := range m.Tools {
		if t == name || strings.HasSuffix(t, "*") && strings.HasPrefix(name, strings.TrimSuffix(t, "*")) {
			return true
		}
	}
	return false
}

// filter keeps the tools of ts the mode allows, in order.
func (m Mode) filter(ts []tools.Tool) []tools.Tool {
	var out []tools.Tool
	for _, t := range ts {
		if m.allows(t.Spec().Name) {
			out = append(out, t)
		}
	}
	return out
}

// modeMark opens a mode's section of the system message; the section is
// the message's last, so a switch changes only its end.
const modeMark = "\n<mode name="

// withMode is system with its mode section replaced by m's (none for a
// mode that adds nothing).
func withMode(system string, m Mode) string {
	if i := strings.LastIndex(system, modeMark); i >= 0 {
		system = system[:i] + "\n"
	}
	if m.Prompt == "" {
		return system
	}
	return strings.TrimRight(system, "\n") + "\n" + fmt.Sprintf("<mode name=%q>\n%s\n</mode>\n", m.Name, m.Prompt)
}

// toolNames lists the names of ts.
func toolNames(ts []tools.Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Spec().Name
	}
	return out
}

// builtinTools are reika's own tools.
func builtinTools() []tools.Tool { return tools.All() }

// sessionTools are the tools a session offers in mode: base (reika's own,
// and any the agent was given besides, such as an MCP server's), then the
// skill tool when there are skills, kept when the mode allows them by
// name.
func sessionTools(base []tools.Tool, skills skillSet, mode Mode) []tools.Tool {
	all := append([]tools.Tool(nil), base...)
	if len(skills.skills) > 0 {
		all = append(all, skillTool{set: skills})
	}
	return mode.filter(all)
}

// pickTools are the tools of available named by specs, in the specs'
// order: a resumed session's tools are the ones its log says were sent.
func pickTools(available []tools.Tool, specs []ctxwin.ToolSpec) []tools.Tool {
	var out []tools.Tool
	for _, s := range specs {
		for _, t := range available {
			if t.Spec().Name == s.Name {
				out = append(out, t)
				break
			}
		}
	}
	return out
}
