package agent

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/reika-lsp/reika-lsp/agent/tools"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

//go:embed system.md
var systemPrompt string

// maxAgentsFile caps the project instructions taken into the fixed prefix.
const maxAgentsFile = 16 << 10

// fixedPrefix builds the system message of a session: the system prompt,
// the environment, and the bootstrap context (the repo map and the
// project's AGENTS.md), unless minimal. It is built once per session and
// stored in the session log, so it is byte-identical across turns and
// restarts.
func fixedPrefix(root string, window int, s Settings, repo repoMapper) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(systemPrompt))
	fmt.Fprintf(&b, "\n\nEnvironment: the workspace root is %s (%s/%s). Paths are relative to it.\n", root, runtime.GOOS, runtime.GOARCH)
	if s.Minimal {
		return b.String()
	}
	if repo != nil {
		budget := ctxwin.RepoMapChars(window)
		if s.RepoMapBudget > 0 {
			budget = s.RepoMapBudget
		}
		if m, err := repo.Render(budget); err == nil && strings.TrimSpace(m) != "" {
			b.WriteString("\n<repo-map>\n")
			b.WriteString(strings.TrimRight(m, "\n"))
			b.WriteString("\n</repo-map>\n")
		}
	}
	if data, err := os.ReadFile(filepath.Join(root, "AGENTS.md")); err == nil && len(data) > 0 {
		text := string(data)
		if len(text) > maxAgentsFile {
			text = text[:maxAgentsFile] + "\n[… AGENTS.md cut at 16 KiB …]"
		}
		b.WriteString("\n<project-instructions file=\"AGENTS.md\">\n")
		b.WriteString(strings.TrimRight(text, "\n"))
		b.WriteString("\n</project-instructions>\n")
	}
	return b.String()
}

// BasePrefixChars is the size of the fixed prefix before the bootstrap
// context: the system prompt and the tool definitions.
func BasePrefixChars() int {
	return len(systemPrompt) + ctxwin.ToolChars(tools.Specs(tools.All()))
}
