package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRepoMapCommand(t *testing.T) {
	files := map[string]string{
		"README.md":         "# demo\n",
		"widget/widget.go":  "package widget\n\ntype Widget struct{}\n\nfunc NewWidget() *Widget { return nil }\n",
		"cmd/main.go":       "package main\n\nfunc main() { widget.NewWidget() }\n",
		"vendor/dep/dep.go": "package dep\n",
	}
	for i := 0; i < 40; i++ {
		files["pkg/f"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+string(rune('a'+i/26))+".go"] = "package pkg\n\nfunc Helper() {}\n"
	}
	dir := writeFiles(t, files)
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)

	out, errs, code := run(t, "repomap", "--budget", "300", dir)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if len(strings.TrimSuffix(out, "\n")) > 300 {
		t.Errorf("map of %d characters over --budget 300:\n%s", len(out), out)
	}
	if !strings.Contains(out, "more files") || strings.Contains(out, "vendor") {
		t.Errorf("map:\n%s", out)
	}

	// The environment sets the budget; the flag wins over it.
	t.Setenv("REIKA_REPO_MAP_BUDGET", "200")
	out, _, _ = run(t, "repomap", dir)
	if n := len(strings.TrimSuffix(out, "\n")); n > 200 || n < 100 {
		t.Errorf("REIKA_REPO_MAP_BUDGET=200 gave %d characters", n)
	}
	out, _, _ = run(t, "repomap", "--budget", "0", dir)
	if strings.Contains(out, "more files") {
		t.Errorf("--budget 0 left files out:\n%s", out)
	}
	t.Setenv("REIKA_REPO_MAP_BUDGET", "lots")
	if _, errs, code := run(t, "repomap", dir); code != 2 || !strings.Contains(errs, "REIKA_REPO_MAP_BUDGET") {
		t.Errorf("bad REIKA_REPO_MAP_BUDGET: exit %d, %q", code, errs)
	}
	t.Setenv("REIKA_REPO_MAP_BUDGET", "")

	// The 5% rule of the window.
	if n, _ := mapBudget(-1, 24000); n != 4800 {
		t.Errorf("budget for a 24000 window = %d, want 4800", n)
	}
	t.Setenv("REIKA_CONTEXT_WINDOW", "32000")
	if n, _ := mapBudget(-1, 0); n != 6400 {
		t.Errorf("budget for REIKA_CONTEXT_WINDOW=32000 = %d, want 6400", n)
	}

	if _, errs, code := run(t, "repomap", dir+"/nope"); code != 1 || errs == "" {
		t.Errorf("missing directory: exit %d, stderr %q", code, errs)
	}
	if _, _, code := run(t, "repomap", dir, dir); code != 2 {
		t.Errorf("two directories: exit %d, want 2", code)
	}
	// --touch puts a file first.
	out, _, _ = run(t, "repomap", "--budget", "0", "--touch", "README.md", dir)
	if !strings.HasPrefix(out, "README.md\n") {
		t.Errorf("--touch README.md:\n%s", out)
	}
}

// TestRepoMapCommandCache: the second run of an unchanged tree prints the
// same map from the cache; --no-cache neither reads nor writes it.
func TestRepoMapCommandCache(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"widget/widget.go": "package widget\n\ntype Widget struct{}\n\nfunc NewWidget() *Widget { return nil }\n",
		"cmd/main.go":      "package main\n\nfunc main() { widget.NewWidget() }\n",
	})
	then := time.Now().Add(-time.Hour) // older than the cache's racy window
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error { return os.Chtimes(p, then, then) })
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)

	cold, errs, code := run(t, "repomap", "--no-cache", "--stats", dir)
	if code != 0 || strings.Contains(errs, "from the cache") {
		t.Fatalf("--no-cache: exit %d, %q", code, errs)
	}
	if entries, _ := os.ReadDir(filepath.Join(cache, "reika", "repomap")); len(entries) != 0 {
		t.Errorf("--no-cache wrote %d cache entries", len(entries))
	}
	for i, want := range []bool{false, true, true} {
		out, errs, _ := run(t, "repomap", "--stats", dir)
		if out != cold || strings.Contains(errs, "from the cache") != want {
			t.Errorf("run %d: stderr %q, map:\n%s\n--- without the cache:\n%s", i, errs, out, cold)
		}
	}
	if _, errs, _ := run(t, "repomap", "--stats", "--budget", "50", dir); strings.Contains(errs, "from the cache") {
		t.Errorf("another budget came from the cache: %q", errs)
	}
}
