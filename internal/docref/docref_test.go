package docref

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCitations holds every source file of the repository to the docs:
// each cited docs/ file and section exists, and nothing cites the design
// files outside the repository.
func TestCitations(t *testing.T) {
	root := filepath.Join("..", "..")
	probs, n, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	outside := false
	for _, p := range probs {
		t.Error(p)
		outside = outside || strings.Contains(p.Msg, "outside the repository")
	}
	if n < 20 {
		t.Errorf("only %d citations of docs/ found; the scan is broken", n)
	}
	if outside {
		t.Log("to cite docs/ instead of the old design files: go run ./internal/docref/cmd/recite")
	}
}

func TestScan(t *testing.T) {
	src := `// The cut (docs/design.md §3.5), and the fold
// (docs/design.md
// §3.7–3.8). Overflow phrasings (docs/engines.md §6, §7.4).
x := "docs/guide/intro.md" // a fixture path, not a citation
-- docs/protocol.md: the status.
`
	cites, probs := Scan("a.go", []byte(src))
	if len(probs) != 0 {
		t.Errorf("problems: %v", probs)
	}
	var got []string
	for _, c := range cites {
		got = append(got, c.Doc+" "+c.Section)
	}
	want := []string{
		"docs/design.md ", "docs/design.md 3.5", "docs/design.md ", "docs/design.md 3.7", "docs/design.md 3.8",
		"docs/engines.md ", "docs/engines.md 6", "docs/engines.md 7.4", "docs/protocol.md ",
	}
	if !slices.Equal(got, want) {
		t.Errorf("citations\n got %q\nwant %q", got, want)
	}
}

func TestScanOutside(t *testing.T) {
	for _, line := range []string{
		"// DESIGN.md §3.5",
		"// the names PROTOCOL.md fixes",
		"// (engines.md §6)",
		"// design/notes/peers-context.md",
		"// see ../shared/design/notes for the facts",
		"// the seed (context-management.md)",
		"// ../seed says so",
		"-- STYLE.md",
		"// notes/treesitter.md §2.3",
		"// §3.9 with no doc before it",
	} {
		if _, probs := Scan("a.go", []byte(line+"\n")); len(probs) != 1 {
			t.Errorf("%q: %d problems, want 1: %v", line, len(probs), probs)
		}
	}
	for _, line := range []string{"// docs/engines.md §6", "// ../../docs/peers.md", "// src/core/context/context-management.ts"} {
		if _, probs := Scan("a.go", []byte(line+"\n")); len(probs) != 0 {
			t.Errorf("%q: %v", line, probs)
		}
	}
}

func TestSections(t *testing.T) {
	md := "# Title\n## 1. Layout\n### 3.5 Cutting\n```\n## 9 not a heading\n```\n#### §7.4 Error types\n## Notes\n"
	got := Sections([]byte(md))
	for _, s := range []string{"1", "3.5", "7.4"} {
		if !got[s] {
			t.Errorf("section %s missing from %v", s, got)
		}
	}
	if got["9"] || len(got) != 3 {
		t.Errorf("sections %v, want 1, 3.5 and 7.4", got)
	}
}

// TestCheckFindsMissing builds a small tree whose sources cite a missing
// doc, a missing section and an outside file.
func TestCheckFindsMissing(t *testing.T) {
	root := t.TempDir()
	write(t, root, "docs/design.md", "# Design\n## 3.5 Cutting\n")
	write(t, root, "a/a.go", "// docs/design.md §3.5 and §3.6\n// docs/nothere.md\n")
	write(t, root, "b/b.ts", "// PROTOCOL.md\n")
	write(t, root, "node_modules/x/c.js", "// DESIGN.md §1\n")
	write(t, root, "README.md", "The design: [design](docs/design.md), [old](../DESIGN.md).\n")
	probs, n, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range probs {
		got = append(got, p.File+":"+strings.TrimRight(strings.Fields(p.Msg)[1], ","))
	}
	slices.Sort(got)
	want := []string{"README.md:../DESIGN.md", "a/a.go:docs/design.md", "a/a.go:docs/nothere.md", "b/b.ts:PROTOCOL.md"}
	if !slices.Equal(got, want) || n != 5 {
		t.Errorf("problems %q (%d citations), want %q (5)", got, n, want)
	}
}

func TestRewrite(t *testing.T) {
	src := `// The cut (DESIGN.md §3.5); PROTOCOL.md's order; (engines.md §6, §7.4).
// the team's note (design/notes/peers-context.md) and ../seed/context-management.md
// The rules are those of the seed (context-management.md), made precise in
// DESIGN.md §3. Kept: docs/engines.md §7.4, STYLE.md.
`
	want := `// The cut (docs/design.md §3.5); docs/protocol.md's order; (docs/engines.md §6, §7.4).
// the team's note (docs/peers.md) and docs/design.md §3
// The rules are those of the seed, made precise in
// docs/design.md §3. Kept: docs/engines.md §7.4, STYLE.md.
`
	got := string(Rewrite([]byte(src)))
	if got != want {
		t.Errorf("Rewrite:\n%s\nwant:\n%s", got, want)
	}
	if again := string(Rewrite([]byte(got))); again != got {
		t.Errorf("Rewrite is not idempotent:\n%s", again)
	}
}

func TestRewriteAnchorsBareSections(t *testing.T) {
	src := "\twindow int // 0 when unknown (§3.9)\n// then (§3.2), and §4\n"
	want := "\twindow int // 0 when unknown (docs/design.md §3.9)\n// then (§3.2), and §4\n"
	if got := string(Rewrite([]byte(src))); got != want {
		t.Errorf("Rewrite:\n%s\nwant:\n%s", got, want)
	}
	src = "-- PROTOCOL.md: the status\n-- §3.10 follows\n"
	if got := string(Rewrite([]byte(src))); got != "-- docs/protocol.md: the status\n-- §3.10 follows\n" {
		t.Errorf("a § after a doc citation changed: %q", got)
	}
}

func write(t *testing.T, root, path, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
