package agent

import (
	_ "embed"
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/reika-lsp/reika-lsp/agent/tools"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

//go:embed system.md
var systemPrompt string

// PrefixPart is one part of a session's fixed prefix, for the window's
// split (reika-lsp window, the status tooltip): its name, its size in
// characters and what it holds.
type PrefixPart struct {
	Name  string `json:"name"`
	Chars int    `json:"chars"`
	Note  string `json:"note,omitempty"`
}

// Names of the parts of the fixed prefix.
const (
	PartSystem       = "system prompt"
	PartTools        = "tools"
	PartSkills       = "skills"
	PartInstructions = "instructions"
	PartRepoMap      = "repo map"
	PartMode         = "mode"
)

// prefix is a session's fixed prefix as built: its system message in
// parts, in order.
type prefix struct {
	parts []prefixPart
}

type prefixPart struct {
	name, text, note string
}

func (p *prefix) add(name, text, note string) {
	if text != "" {
		p.parts = append(p.parts, prefixPart{name, text, note})
	}
}

// system is the system message: the parts joined.
func (p *prefix) system() string {
	var b strings.Builder
	for _, part := range p.parts {
		b.WriteString(part.text)
	}
	return b.String()
}

// split is the parts' sizes, with the tools' definitions after the system
// prompt; parts of one name are summed.
func (p *prefix) split(specs []ctxwin.ToolSpec, toolNote string) []PrefixPart {
	out := []PrefixPart{}
	idx := map[string]int{}
	add := func(name string, chars int, note string) {
		if i, ok := idx[name]; ok {
			out[i].Chars += chars
			if note != "" {
				out[i].Note = strings.TrimPrefix(out[i].Note+"; "+note, "; ")
			}
			return
		}
		idx[name] = len(out)
		out = append(out, PrefixPart{Name: name, Chars: chars, Note: note})
	}
	for i, part := range p.parts {
		add(part.name, len(part.text), part.note)
		if i == 0 {
			add(PartTools, ctxwin.ToolChars(specs), toolNote)
		}
	}
	return out
}

// prefixInputs are what a session's fixed prefix is built from.
type prefixInputs struct {
	root   string
	window int
	set    Settings
	repo   repoMapper // nil: no repo map
	skills skillSet
	mode   Mode
}

// buildPrefix builds the system message of a session: the system prompt,
// the environment, and the bootstrap context (the repo map, the skill list
// and the instruction files), unless minimal; then the mode's prompt. It
// is built once per session and stored in the session log, so it is
// byte-identical across turns and restarts.
func buildPrefix(in prefixInputs) *prefix {
	p := &prefix{}
	p.add(PartSystem, strings.TrimSpace(systemPrompt)+
		fmt.Sprintf("\n\nEnvironment: the workspace root is %s (%s/%s). Paths are relative to it.\n", in.root, runtime.GOOS, runtime.GOARCH), "")
	if !in.set.Minimal {
		if in.repo != nil {
			if m, err := in.repo.Render(repoMapBudget(in.window, in.set)); err == nil && strings.TrimSpace(m) != "" {
				p.add(PartRepoMap, "\n<repo-map>\n"+strings.TrimRight(m, "\n")+"\n</repo-map>\n", "")
			}
		}
		block, shown := in.skills.prefixBlock(SkillListChars(in.window))
		p.add(PartSkills, block, skillNote(len(in.skills.skills), shown))
		for _, f := range prefixInstructions(in.root) {
			note := fmt.Sprintf("%s %d bytes", f.shown, f.size)
			if len(f.text) < f.size {
				note += fmt.Sprintf(" (cut at %d KiB)", maxAgentsFile>>10)
			}
			p.add(PartInstructions, "\n"+f.block(), note)
		}
	}
	if in.mode.Prompt != "" {
		p.add(PartMode, withMode("\n", in.mode)[1:], in.mode.Name)
	}
	return p
}

// skillNote says how many skills the list shows.
func skillNote(found, shown int) string {
	if found == shown {
		return fmt.Sprintf("%d listed", found)
	}
	return fmt.Sprintf("%d of %d listed (%d left out by the budget)", shown, found, found-shown)
}

// repoMapBudget is the repo map's budget in characters.
func repoMapBudget(window int, s Settings) int {
	if s.RepoMapBudget > 0 {
		return s.RepoMapBudget
	}
	return ctxwin.RepoMapChars(window)
}

// fixedPrefix builds the system message of a session in code mode with no
// skills (tests and the old callers).
func fixedPrefix(root string, window int, s Settings, repo repoMapper) string {
	return buildPrefix(prefixInputs{root: root, window: window, set: s, repo: repo}).system()
}

// BasePrefixChars is the size of the fixed prefix before the bootstrap
// context: the system prompt and the tool definitions.
func BasePrefixChars() int {
	return len(systemPrompt) + ctxwin.ToolChars(tools.Specs(tools.All()))
}

// PrefixSplit is what the fixed prefix of a new session in the workspace
// at root would hold, part by part, in a window of window tokens (0:
// unknown): the repo map is priced at its budget rather than built. The
// MCP servers' tools, when there are any, add their own parts.
func PrefixSplit(root string, window int, s Settings) ([]PrefixPart, error) {
	mode, err := resolveMode(root, s.Mode)
	if err != nil {
		return nil, err
	}
	var skills skillSet
	if !s.Minimal {
		skills = findSkills(root)
	}
	p := buildPrefix(prefixInputs{root: root, window: window, set: s, skills: skills, mode: mode})
	ts := sessionTools(builtinTools(), skills, mode)
	parts := p.split(tools.Specs(ts), strings.Join(toolNames(ts), ", "))
	parts = withEmpty(parts, PartSkills, s.Minimal, "none found")
	parts = withEmpty(parts, PartInstructions, s.Minimal, "no AGENTS.md or CLAUDE.md")
	if !s.Minimal {
		parts = append(parts, PrefixPart{Name: PartRepoMap, Chars: repoMapBudget(window, s), Note: "its budget; the map may take less"})
	}
	return parts, nil
}

// withEmpty is parts with an empty part named name after the ones before
// it in the split's order, when there is none: why says why it is empty.
func withEmpty(parts []PrefixPart, name string, minimal bool, why string) []PrefixPart {
	for _, p := range parts {
		if p.Name == name {
			return parts
		}
	}
	if minimal {
		why = "dropped: minimal"
	}
	i := len(parts)
	for j, p := range parts {
		if p.Name == PartMode {
			i = j
		}
	}
	return append(parts[:i:i], append([]PrefixPart{{Name: name, Note: why}}, parts[i:]...)...)
}

// prefixChars is what the fixed prefix of a new session in the workspace
// at root will take, in characters (PrefixSplit); without a workspace, or
// in a mode that does not exist, the system prompt, every tool and the
// repo map's budget.
func prefixChars(set Settings, window int, root string) int {
	var parts []PrefixPart
	err := errors.New("no workspace")
	if root != "" {
		parts, err = PrefixSplit(root, window, set)
	}
	if err != nil {
		n := BasePrefixChars()
		if !set.Minimal {
			n += repoMapBudget(window, set)
		}
		return n
	}
	n := 0
	for _, p := range parts {
		n += p.Chars
	}
	return n
}
