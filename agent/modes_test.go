package agent

import (
	"strings"
	"testing"
)

func TestModesFilterTools(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	skills := skillSet{skills: []Skill{{Name: "s", Description: "d"}}}
	for mode, want := range map[string]string{
		ModeCode: "read write edit bash grep glob fetch_url subagent skill",
		ModePlan: "read grep glob fetch_url skill",
		ModeAsk:  "read grep glob fetch_url skill",
	} {
		m, err := resolveMode(root, mode)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(toolNames(sessionTools(builtinTools(), skills, m)), " "); got != want {
			t.Errorf("%s: tools %q, want %q", mode, got, want)
		}
	}
	if _, err := resolveMode(root, "nope"); err == nil || !strings.Contains(err.Error(), "code, plan, ask") {
		t.Errorf("unknown mode: %v", err)
	}
}

func TestCustomMode(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	writeFile(t, root, ".reika/modes/review.md", "---\ndescription: review only\ntools: Read, Grep, Bash, mcp__gh__*\n---\nReview; never edit.\n")
	m, err := resolveMode(root, "review")
	if err != nil {
		t.Fatal(err)
	}
	if m.Description != "review only" || m.Prompt != "Review; never edit." {
		t.Errorf("mode %+v", m)
	}
	if got := strings.Join(toolNames(sessionTools(builtinTools(), skillSet{}, m)), " "); got != "read bash grep" {
		t.Errorf("tools %q", got)
	}
	if !m.allows("mcp__gh__issue") || m.allows("mcp__other__x") {
		t.Error("the mcp__gh__* pattern")
	}
	sys := "prompt\n"
	with := withMode(sys, m)
	if !strings.HasPrefix(with, sys) || !strings.Contains(with, "<mode name=\"review\">\nReview; never edit.\n</mode>") {
		t.Errorf("withMode:\n%s", with)
	}
	code, _ := resolveMode(root, ModeCode)
	if back := withMode(with, code); back != sys {
		t.Errorf("back to code: %q", back)
	}
}
