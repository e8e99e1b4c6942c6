package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/approval"
)

// TestVCSWritesNeedCommandApproval writes into version-control directories
// with edits allowed and commands not: each write asks as a command would,
// and nothing is written when that is denied; other files are edits.
func TestVCSWritesNeedCommandApproval(t *testing.T) {
	root := workspace(t, map[string]string{".git/config": "[core]\n", "src/a.go": "package a\n", ".hg/hgrc": "", "sub/.git/HEAD": "ref\n", "wt/.git": "gitdir: ../.git/worktrees/wt\n"})
	os.Symlink(".git", filepath.Join(root, "gitlink"))
	editsOnly := &approver{decide: func(a approval.Request) bool { return a.Kind == "edit" }}
	env := newEnv(t, root, editsOnly)
	for _, tc := range []struct{ tool, args string }{
		{"write", jsonArgs(t, map[string]any{"path": ".git/config", "content": "[core]\n\tfsmonitor = touch pwned\n"})},
		{"edit", jsonArgs(t, map[string]any{"path": ".git/config", "old_string": "[core]", "new_string": "[core]\n\tfsmonitor = touch pwned"})},
		{"write", jsonArgs(t, map[string]any{"path": ".git/hooks/pre-commit", "content": "touch pwned\n"})},
		{"write", jsonArgs(t, map[string]any{"path": ".GIT/config", "content": "x\n"})},
		{"write", jsonArgs(t, map[string]any{"path": "gitlink/config", "content": "x\n"})},
		{"write", jsonArgs(t, map[string]any{"path": "sub/.git/HEAD", "content": "x\n"})},
		{"write", jsonArgs(t, map[string]any{"path": ".hg/hgrc", "content": "[hooks]\n"})},
		{"write", jsonArgs(t, map[string]any{"path": "wt/.git", "content": "gitdir: /tmp/evil\n"})},
	} {
		editsOnly.asked = nil
		res := run(t, env, tc.tool, tc.args)
		if !res.IsError || !strings.Contains(res.Text, "a version-control directory: what is written there can run commands") {
			t.Errorf("%s %s: %+v", tc.tool, tc.args, res)
		}
		if len(editsOnly.asked) != 1 || editsOnly.asked[0].Kind != "command" {
			t.Errorf("%s %s asked %+v, want one command approval", tc.tool, tc.args, editsOnly.asked)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, ".git", "config")); string(b) != "[core]\n" {
		t.Errorf(".git/config was changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(root, ".git", "hooks", "pre-commit")); err == nil {
		t.Error("a hook was written")
	}
	editsOnly.asked = nil
	if res := run(t, env, "write", jsonArgs(t, map[string]any{"path": "src/a.go", "content": "package b\n"})); res.IsError {
		t.Errorf("an ordinary write: %+v", res)
	}
	if len(editsOnly.asked) != 1 || editsOnly.asked[0].Kind != "edit" {
		t.Errorf("an ordinary write asked %+v", editsOnly.asked)
	}
}
