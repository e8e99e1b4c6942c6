package agent

import (
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

func TestPrefixInstructions(t *testing.T) {
	root, cfg := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	writeFile(t, cfg, "reika/AGENTS.md", "Global rule.\n")
	writeFile(t, root, "CLAUDE.md", "Claude rule.\n")
	sys := fixedPrefix(root, 16000, Settings{}, nil)
	if !strings.Contains(sys, "Global rule.") || !strings.Contains(sys, "<project-instructions file=\"CLAUDE.md\">\nClaude rule.") {
		t.Errorf("prefix:\n%s", sys)
	}
	writeFile(t, root, "AGENTS.md", "Agents rule.\n")
	sys = fixedPrefix(root, 16000, Settings{}, nil)
	if !strings.Contains(sys, "Agents rule.") || strings.Contains(sys, "Claude rule.") {
		t.Errorf("AGENTS.md does not win over CLAUDE.md:\n%s", sys)
	}
	writeFile(t, root, "AGENTS.md", strings.Repeat("x", maxAgentsFile+10))
	if sys = fixedPrefix(root, 16000, Settings{}, nil); !strings.Contains(sys, "cut at 16 KiB") {
		t.Error("a large AGENTS.md is not cut")
	}
	if sys = fixedPrefix(root, 16000, Settings{Minimal: true}, nil); strings.Contains(sys, "Global rule.") {
		t.Error("minimal keeps the instructions")
	}
}

func TestNestedInstructionsOnce(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	writeFile(t, root, "AGENTS.md", "top\n")
	writeFile(t, root, "web/AGENTS.md", "Web rule.\n")
	writeFile(t, root, "web/ui/CLAUDE.md", "UI rule.\n")
	writeFile(t, root, "web/ui/a.ts", "x\n")
	s := &session{root: root}
	res := &ctxwin.Result{Kind: ctxwin.KindRead, Path: "web/ui/a.ts", Text: "1 x"}
	s.addNested(res)
	if strings.Contains(res.Text, "top") || !strings.Contains(res.Text, "<directory-instructions file=\"web/AGENTS.md\">\nWeb rule.") ||
		!strings.Contains(res.Text, "UI rule.") || strings.Index(res.Text, "Web rule") > strings.Index(res.Text, "UI rule") {
		t.Errorf("first result:\n%s", res.Text)
	}
	again := &ctxwin.Result{Kind: ctxwin.KindRead, Path: "web/b.ts", Text: "1 y"}
	s.addNested(again)
	if again.Text != "1 y" {
		t.Errorf("delivered twice:\n%s", again.Text)
	}
	resumed := map[string]bool{}
	deliveredIn(res, resumed)
	if !resumed["web"] || !resumed["web/ui"] {
		t.Errorf("a resume reads %v", resumed)
	}
}
