package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFile writes a file under root, making its directories.
func writeFile(t *testing.T, root, rel, text string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFindSkills(t *testing.T) {
	root, cfg := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	writeFile(t, root, ".reika/skills/pdf/SKILL.md", "---\nname: pdf\ndescription: Fill PDF forms\n---\nUse pdftk.\n")
	writeFile(t, root, ".claude/skills/review/SKILL.md", "---\nname: review\ndescription: >\n  Review a change\n  carefully\n---\nRead the diff.\n")
	writeFile(t, root, ".agents/skills/pdf/SKILL.md", "---\nname: pdf\ndescription: another pdf\n---\nx\n")
	writeFile(t, root, ".agents/skills/broken/SKILL.md", "---\nname: broken\n---\nno description\n")
	writeFile(t, cfg, "reika/skills/mine/SKILL.md", "---\ndescription: The user's own\n---\nbody\n")
	set := findSkills(root)
	var got []string
	for _, sk := range set.skills {
		got = append(got, sk.Name+"="+sk.Description)
	}
	want := "pdf=Fill PDF forms review=Review a change carefully mine=The user's own"
	if strings.Join(got, " ") != want {
		t.Errorf("skills %q, want %q", got, want)
	}
	probs := strings.Join(set.problems, "\n")
	if !strings.Contains(probs, ".agents/skills/broken/SKILL.md: no description") || !strings.Contains(probs, "already defined by .reika/skills/pdf/SKILL.md") {
		t.Errorf("problems:\n%s", probs)
	}
}

func TestSkillListBudget(t *testing.T) {
	var set skillSet
	for i := 0; i < 40; i++ {
		set.skills = append(set.skills, Skill{Name: fmt.Sprintf("skill-%02d", i), Description: strings.Repeat("does a thing ", 8)})
	}
	budget := SkillListChars(8000)
	if budget != skillListMin {
		t.Errorf("an 8k window's list budget is %d, want the minimum %d", budget, skillListMin)
	}
	block, shown := set.prefixBlock(budget)
	if shown == 0 || shown >= 40 {
		t.Fatalf("listed %d of 40", shown)
	}
	if !strings.Contains(block, fmt.Sprintf("[%d more skills are left out", 40-shown)) {
		t.Errorf("no note of the skills left out:\n%s", block)
	}
	if len(block) > budget+200 {
		t.Errorf("the block is %d chars for a budget of %d", len(block), budget)
	}
	if all, n := set.prefixBlock(SkillListChars(1 << 20)); n != 40 || strings.Contains(all, "left out") {
		t.Errorf("a large window lists %d", n)
	}
}

func TestSkillToolLoadsTheBody(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	writeFile(t, root, ".reika/skills/pdf/SKILL.md", "---\nname: pdf\ndescription: Fill PDF forms\n---\nRun fill.sh beside this file.\n")
	tool := skillTool{set: findSkills(root)}
	res, err := tool.Run(context.Background(), nil, json.RawMessage(`{"name":"pdf"}`))
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	if !strings.Contains(res.Text, "Run fill.sh beside this file.") || strings.Contains(res.Text, "description:") ||
		!strings.Contains(res.Text, ".reika/skills/pdf/") {
		t.Errorf("text:\n%s", res.Text)
	}
	if !strings.Contains(res.Summary, "skill pdf") || !strings.Contains(res.Summary, `"pdf"`) {
		t.Errorf("the shed summary does not name the skill: %q", res.Summary)
	}
	res, _ = tool.Run(context.Background(), nil, json.RawMessage(`{"name":"nope"}`))
	if !res.IsError || !strings.Contains(res.Text, "the skills are pdf") {
		t.Errorf("unknown skill: %+v", res)
	}
	for _, bad := range []string{`{}`, `{"name":" "}`, `{"skill":"pdf"}`, `[`} {
		res, _ = tool.Run(context.Background(), nil, json.RawMessage(bad))
		if want := `Error: want {"name": string}: the name of a listed skill`; !res.IsError || res.Text != want {
			t.Errorf("%s: %q, want %q", bad, res.Text, want)
		}
	}
}

func TestMinimalDropsTheSkillList(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	writeFile(t, root, ".reika/skills/pdf/SKILL.md", "---\nname: pdf\ndescription: Fill PDF forms\n---\nbody\n")
	set := findSkills(root)
	in := prefixInputs{root: root, window: 16000, skills: set}
	if sys := buildPrefix(in).system(); !strings.Contains(sys, "- pdf: Fill PDF forms") {
		t.Fatalf("no skill list:\n%s", sys)
	}
	in.set.Minimal = true
	if sys := buildPrefix(in).system(); strings.Contains(sys, "<skills>") {
		t.Errorf("minimal keeps the skill list:\n%s", sys)
	}
	parts, _ := PrefixSplit(root, 16000, Settings{Minimal: true})
	for _, p := range parts {
		if p.Name == PartTools && strings.Contains(p.Note, NameSkill) {
			t.Errorf("minimal keeps the skill tool: %+v", p)
		}
	}
}
