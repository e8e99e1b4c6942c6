package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
)

// TestPrefixSplitPricesEveryPart: the split names each part with its
// size, and the status before the first turn counts them all.
func TestPrefixSplitPricesEveryPart(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	root := t.TempDir()
	part := func(parts []agent.PrefixPart, name string) agent.PrefixPart {
		for _, p := range parts {
			if p.Name == name {
				return p
			}
		}
		t.Fatalf("no part %q in %+v", name, parts)
		return agent.PrefixPart{}
	}
	bare, err := agent.PrefixSplit(root, 16000, agent.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if part(bare, agent.PartSkills).Chars != 0 || part(bare, agent.PartInstructions).Chars != 0 || part(bare, agent.PartTools).Chars == 0 {
		t.Errorf("an empty workspace: %+v", bare)
	}
	os.MkdirAll(filepath.Join(root, ".reika/skills/pdf"), 0o755)
	os.WriteFile(filepath.Join(root, ".reika/skills/pdf/SKILL.md"), []byte("---\nname: pdf\ndescription: Fill PDF forms\n---\nbody\n"), 0o644)
	os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte(strings.Repeat("Always run go vet.\n", 400)), 0o644)
	full, err := agent.PrefixSplit(root, 16000, agent.Settings{Mode: agent.ModePlan})
	if err != nil {
		t.Fatal(err)
	}
	if s := part(full, agent.PartSkills); s.Chars == 0 || s.Note != "1 listed" {
		t.Errorf("skills: %+v", s)
	}
	if in := part(full, agent.PartInstructions); in.Chars < 7600 || !strings.Contains(in.Note, "AGENTS.md 7600 bytes") {
		t.Errorf("instructions: %+v", in)
	}
	if tl := part(full, agent.PartTools); tl.Note != "read, grep, glob, fetch_url, skill" || tl.Chars >= part(bare, agent.PartTools).Chars {
		t.Errorf("plan's tools: %+v", tl)
	}
	part(full, agent.PartMode)

	srv := enginetest.New(enginetest.Options{Window: 16000})
	defer srv.Close()
	small := newAgent(t, srv, t.TempDir(), agent.Settings{}, &collector{}).Status().Size
	large := newAgent(t, srv, root, agent.Settings{}, &collector{}).Status().Size
	if large-small < 7600/4 {
		t.Errorf("the status before the first turn does not count the instructions: %d vs %d tokens", large, small)
	}
}
