package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/reika-lsp/reika-lsp/agent/tools"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// Skills (the Agent Skills format): a folder holding SKILL.md, whose YAML
// frontmatter gives the skill's name and description and whose Markdown
// body is the instructions, with any other files beside it. The fixed
// prefix lists each skill's name and description; the body reaches the
// model only when it calls the skill tool, as a tool result that sheds like
// any other.

// skillDirs are where a workspace's skills live, searched in this order;
// the user's own are in $XDG_CONFIG_HOME/reika/skills, searched last. The
// first skill of a name wins.
var skillDirs = []string{".reika/skills", ".agents/skills", ".claude/skills"}

// NameSkill is the skill tool's name.
const NameSkill = "skill"

// Bounds of a skill: the Agent Skills format allows a 1024-character
// description; an entry of the prefix's list shows at most listDescChars
// of it; a body past maxSkillBody is cut.
const (
	maxSkillDesc  = 1024
	listDescChars = 300
	maxSkillBody  = 64 << 10
)

// Skill is one skill found.
type Skill struct {
	Name        string
	Description string
	// Path is its SKILL.md; Shown is how it is named to the model and the
	// user: workspace-relative, or with ~ for the home directory.
	Path, Shown string
}

// skillSet is the skills of a session, found when it starts.
type skillSet struct {
	skills []Skill
	// problems are the SKILL.md files that could not be used, and why.
	problems []string
}

// configDir is $XDG_CONFIG_HOME/reika ("" when there is no home).
func configDir() string {
	p := ConfigFilePath()
	if p == "" {
		return ""
	}
	return filepath.Dir(p)
}

// findSkills looks for the skills of the workspace at root and the user's.
// A SKILL.md that cannot be read or parsed, or has no description, is a
// problem, not a failure.
func findSkills(root string) skillSet {
	var set skillSet
	seen := map[string]string{}
	dirs := make([]string, 0, len(skillDirs)+1)
	for _, d := range skillDirs {
		dirs = append(dirs, filepath.Join(root, d))
	}
	if c := configDir(); c != "" {
		dirs = append(dirs, filepath.Join(c, "skills"))
	}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			path := filepath.Join(dir, e.Name(), "SKILL.md")
			if _, err := os.Stat(path); err != nil {
				continue
			}
			sk, err := loadSkill(path, e.Name())
			sk.Shown = shownPath(root, path)
			switch {
			case err != nil:
				set.problems = append(set.problems, fmt.Sprintf("%s: %v", sk.Shown, err))
			case seen[sk.Name] != "":
				set.problems = append(set.problems, fmt.Sprintf("%s: skill %q is already defined by %s; this one is not used", sk.Shown, sk.Name, seen[sk.Name]))
			default:
				seen[sk.Name] = sk.Shown
				set.skills = append(set.skills, sk)
			}
		}
	}
	return set
}

// loadSkill reads a SKILL.md's frontmatter; dirName names a skill whose
// frontmatter does not.
func loadSkill(path, dirName string) (Skill, error) {
	sk := Skill{Path: path, Name: dirName}
	data, err := os.ReadFile(path)
	if err != nil {
		return sk, err
	}
	fm, _, err := parseFrontmatter(data)
	if err != nil {
		return sk, err
	}
	if fm.Name != "" {
		sk.Name = fm.Name
	}
	if strings.ContainsAny(sk.Name, " \t\n\"") {
		return sk, fmt.Errorf("the name %q has spaces or quotes; use lowercase letters, digits and hyphens", sk.Name)
	}
	if fm.Description == "" {
		return sk, fmt.Errorf("no description in its frontmatter (---\\nname: %s\\ndescription: when to use it\\n---); the model could not know when to load it", sk.Name)
	}
	sk.Description = oneLine(fm.Description, maxSkillDesc)
	return sk, nil
}

// shownPath names path relative to root when inside it, else with ~ for
// the home directory.
func shownPath(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" && strings.HasPrefix(path, home+string(filepath.Separator)) {
		return "~" + path[len(home):]
	}
	return path
}

// oneLine folds s onto one line of at most n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		cut := n - len("…")
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// SkillListChars is the most characters the fixed prefix's skill list may
// take in a window of window tokens: 2% of the window at four characters a
// token, between 1000 and 8000 characters. The list is an index the model
// picks from, not the instructions themselves: at about 150 characters an
// entry that is some six skills on an 8k window and fifty on a 100k one,
// well under the repo map's 5%. An unknown window gets the most.
func SkillListChars(window int) int {
	if window <= 0 {
		return skillListMax
	}
	return min(max(window*2/100*4, skillListMin), skillListMax)
}

const (
	skillListMin = 1000
	skillListMax = 8000
)

// prefixBlock is the skill list of the fixed prefix, cut to budget
// characters with a note saying how many skills were left out; "" when
// there are none. shown is how many it lists.
func (s skillSet) prefixBlock(budget int) (block string, shown int) {
	if len(s.skills) == 0 {
		return "", 0
	}
	var b strings.Builder
	b.WriteString("\n<skills>\nSkills are instructions for particular tasks. When a task matches a skill's description, call the skill tool with its name and follow what it returns.\n")
	for _, sk := range s.skills { // in the order found: the workspace's first
		line := fmt.Sprintf("- %s: %s\n", sk.Name, oneLine(sk.Description, listDescChars))
		if b.Len()+len(line) > budget {
			break
		}
		b.WriteString(line)
		shown++
	}
	if left := len(s.skills) - shown; left > 0 {
		fmt.Fprintf(&b, "[%d more skills are left out of this list to keep the window: it is bounded to %d characters]\n", left, budget)
	}
	b.WriteString("</skills>\n")
	return b.String(), shown
}

// find is the skill named name.
func (s skillSet) find(name string) (Skill, bool) {
	for _, sk := range s.skills {
		if sk.Name == name {
			return sk, true
		}
	}
	return Skill{}, false
}

// names lists the skills' names.
func (s skillSet) names() []string {
	out := make([]string, len(s.skills))
	for i, sk := range s.skills {
		out[i] = sk.Name
	}
	return out
}

// skillTool loads a skill's instructions.
type skillTool struct{ set skillSet }

// skillParams are the skill tool's parameters (agent/tools/params.go).
type skillParams struct {
	Name string `json:"name" jsonschema:"The skill's name, as listed."`
}

var skillDecl = tools.Declare[skillParams]()

func (t skillTool) Spec() ctxwin.ToolSpec {
	return skillDecl.Spec(NameSkill, "Load the instructions of a skill listed under <skills> in the system message, by its name. Follow them for the task at hand; "+
		"files they mention are in the skill's folder, which the result names.")
}

func (t skillTool) Run(_ context.Context, _ *tools.Env, raw json.RawMessage) (ctxwin.Result, error) {
	args, err := skillDecl.Decode(raw)
	if err != nil || strings.TrimSpace(args.Name) == "" {
		return skillError("want %s: the name of a listed skill", skillDecl.Usage()), nil
	}
	name := strings.TrimSpace(args.Name)
	sk, ok := t.set.find(name)
	if !ok {
		return skillError("there is no skill %q; the skills are %s", name, strings.Join(t.set.names(), ", ")), nil
	}
	data, err := os.ReadFile(sk.Path)
	if err != nil {
		return skillError("skill %q could not be read: %v", name, err), nil
	}
	_, body, err := parseFrontmatter(data)
	if err != nil {
		return skillError("skill %q: %s: %v", name, sk.Shown, err), nil
	}
	if len(body) > maxSkillBody {
		body = body[:maxSkillBody] + "\n[… the skill is cut at 64 KiB …]"
	}
	dir := filepath.ToSlash(filepath.Dir(sk.Shown))
	text := fmt.Sprintf("Skill %s (%s; files it names are in %s/):\n\n%s", name, sk.Shown, dir, strings.TrimRight(body, "\n"))
	return ctxwin.Result{Kind: NameSkill, Text: text,
		Summary: fmt.Sprintf("skill %s: its instructions were loaded here; call skill {\"name\": %q} to load them again", name, name)}, nil
}

func skillError(format string, args ...any) ctxwin.Result {
	text := fmt.Sprintf(format, args...)
	return ctxwin.Result{Kind: NameSkill, Text: "Error: " + text, IsError: true, Summary: "skill: " + oneLine(text, 120)}
}
