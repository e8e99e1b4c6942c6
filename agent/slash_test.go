package agent

import (
	"strings"
	"testing"
)

func TestParseSlash(t *testing.T) {
	tests := []struct {
		prompt, name, args string
		ok                 bool
	}{
		{"/compact", "compact", "", true},
		{"  /save notes.md ", "save", "notes.md", true},
		{"/mode plan", "mode", "plan", true},
		{"/frontend:component Button", "frontend:component", "Button", true},
		{"/review\nthe change", "review", "the change", true},
		{"/usr/bin/env is missing", "", "", false},
		{"/README.md says hi", "", "", false},
		{"/Compact", "", "", false},
		{"please /compact", "", "", false},
		{"/", "", "", false},
	}
	for _, tt := range tests {
		name, args, ok := parseSlash(tt.prompt)
		if name != tt.name || args != tt.args || ok != tt.ok {
			t.Errorf("%q: got %q %q %v", tt.prompt, name, args, ok)
		}
	}
}

func TestCommandExpand(t *testing.T) {
	c := Command{body: "Fix issue $ARGUMENTS, starting with $1."}
	if got := c.expand("42 now"); got != "Fix issue 42 now, starting with 42." {
		t.Errorf("got %q", got)
	}
	c = Command{body: "Review the code."}
	if got := c.expand("a.go"); got != "Review the code.\n\nARGUMENTS: a.go" {
		t.Errorf("got %q", got)
	}
	if got := c.expand(""); got != "Review the code." {
		t.Errorf("got %q", got)
	}
}

func TestFindCommands(t *testing.T) {
	root, cfg := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	writeFile(t, root, ".reika/commands/fix.md", "---\ndescription: Fix an issue\nargument-hint: [issue]\n---\nFix $ARGUMENTS\n")
	writeFile(t, root, ".reika/commands/fe/comp.md", "Make a component\n")
	writeFile(t, root, ".reika/commands/help.md", "mine\n")
	writeFile(t, cfg, "reika/commands/fix.md", "global fix\n")
	writeFile(t, cfg, "reika/commands/todo.md", "List the TODOs\n")
	cmds, problems := findCommands(root)
	var names []string
	for _, c := range cmds {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, " "); got != "compact new save mode skills help fe:comp fix todo" {
		t.Errorf("commands %q", got)
	}
	for _, c := range cmds {
		if c.Name == "fix" && (c.Description != "Fix an issue" || c.ArgumentHint != "[issue]" || c.Source != ".reika/commands/fix.md") {
			t.Errorf("fix: %+v", c)
		}
	}
	if p := strings.Join(problems, "\n"); !strings.Contains(p, "/help is already a command") || !strings.Contains(p, "/fix is already a command") {
		t.Errorf("problems:\n%s", p)
	}
}
