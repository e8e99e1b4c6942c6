package outline

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// newCachedMap is a map of root with its cache under dir: what a new
// process makes.
func newCachedMap(root, dir string) *RepoMap {
	m := NewRepoMap(root)
	m.SetCacheDir(dir)
	return m
}

// render renders m or fails the test.
func render(t *testing.T, m *RepoMap, budget int) (string, MapStats) {
	t.Helper()
	out, err := m.Render(budget)
	if err != nil {
		t.Fatal(err)
	}
	return out, m.Stats()
}

// rewrite replaces a file of the tree, dated at.
func rewrite(t *testing.T, root, rel, content string, at time.Time) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, at, at); err != nil {
		t.Fatal(err)
	}
}

// TestRepoMapCacheDir: a second map (a new process) of an unchanged tree
// with the same cache directory parses and ranks nothing and gives the same
// bytes; a changed file is parsed alone and changes the map; another root
// does not use this root's cache.
func TestRepoMapCacheDir(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, workspace)
	dir := filepath.Join(t.TempDir(), "sub")
	cold, s := render(t, newCachedMap(root, dir), 4000)
	if s.CacheErr != nil || s.Parsed == 0 || s.Reused {
		t.Fatalf("first render: %+v", s)
	}
	warm, s2 := render(t, newCachedMap(root, dir), 4000)
	if !s2.Reused || s2.Parsed != 0 || s2.Files != s.Files || s2.Shown != s.Shown || s2.Skipped != s.Skipped {
		t.Errorf("a new map of an unchanged tree: %+v, first %+v", s2, s)
	}
	if warm != cold {
		t.Errorf("warm map differs from the cold one:\n%s\n--- cold:\n%s", warm, cold)
	}
	if fresh, _ := render(t, NewRepoMap(root), 4000); fresh != cold {
		t.Errorf("a map without a cache differs from the cached one:\n%s\n--- cached:\n%s", fresh, cold)
	}

	rewrite(t, root, "widget/widget.go", "package widget\n\ntype Gadget struct{}\n", time.Now().Add(-time.Minute))
	changed, s3 := render(t, newCachedMap(root, dir), 4000)
	if s3.Reused || s3.Parsed != 1 {
		t.Errorf("after one change, a new map: %+v (want 1 file parsed)", s3)
	}
	if hasTreeSitter && (!strings.Contains(changed, "Gadget") || strings.Contains(changed, "NewWidget")) {
		t.Errorf("the map does not follow the change:\n%s", changed)
	}

	other := t.TempDir()
	writeTree(t, other, map[string]string{"widget/widget.go": "package widget\n"})
	if _, s := render(t, newCachedMap(other, dir), 4000); s.Cached != 0 || s.Reused {
		t.Errorf("another root used this cache: %+v", s)
	}
}

// TestRepoMapReuseInvalidation: the kept map is reused only for the same
// files, touches and budget: a touched file's change, another budget and
// another touch each render anew, and the result is what a map without a
// cache renders.
func TestRepoMapReuseInvalidation(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, workspace)
	dir := t.TempDir()
	touched := func(budget int, touches ...string) (string, MapStats) {
		m := newCachedMap(root, dir)
		nc := NewRepoMap(root)
		for _, rel := range touches {
			m.Touch(rel)
			nc.Touch(rel)
		}
		out, s := render(t, m, budget)
		if want, _ := render(t, nc, budget); out != want {
			t.Errorf("budget %d, touches %v: cached map differs from a fresh one:\n%s\n--- fresh:\n%s", budget, touches, out, want)
		}
		return out, s
	}
	touched(0, "lonely/lonely.go")
	first, s := touched(0, "lonely/lonely.go")
	if !s.Reused {
		t.Fatalf("same files, touches and budget were not reused: %+v", s)
	}

	// The touched file changes: its new declaration shows.
	rewrite(t, root, "lonely/lonely.go", "package lonely\n\nfunc Lonely() {}\n\nfunc Company() {}\n", time.Now().Add(-time.Minute))
	out, s := touched(0, "lonely/lonely.go")
	if s.Reused || s.Parsed != 1 || out == first {
		t.Errorf("a touched file's change reused the map: %+v\n%s", s, out)
	}
	if hasTreeSitter && !strings.HasPrefix(out, "lonely/lonely.go\n  func Lonely()\n  func Company()\n") {
		t.Errorf("the map does not show the touched file's change:\n%s", out)
	}
	if _, s := touched(0, "lonely/lonely.go"); !s.Reused {
		t.Errorf("the changed tree's map was not kept: %+v", s)
	}

	// Another budget.
	small, s := touched(150, "lonely/lonely.go")
	if s.Reused || len(small) > 150 || small == out {
		t.Errorf("another budget reused the map: %+v\n%s", s, small)
	}
	// Another touched set, and the same files in another order.
	if _, s := touched(0, "tools/report.py"); s.Reused {
		t.Errorf("another touched file reused the map: %+v", s)
	}
	a, _ := touched(0, "tools/report.py", "lonely/lonely.go")
	b, s := touched(0, "lonely/lonely.go", "tools/report.py")
	if s.Reused || a == b {
		t.Errorf("touches in another order reused the map: %+v", s)
	}
	// A file added or removed.
	rewrite(t, root, "lonely/new.go", "package lonely\n", time.Now().Add(-time.Minute))
	if _, s := touched(0, "lonely/lonely.go", "tools/report.py"); s.Reused {
		t.Errorf("a new file reused the map: %+v", s)
	}
}

// TestRepoMapBrokenCache: truncated, damaged and foreign cache files are
// ignored, the map is the same as from nothing, and the files are written
// anew so that the next process reuses them.
func TestRepoMapBrokenCache(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, workspace)
	dir := t.TempDir()
	want, _ := render(t, newCachedMap(root, dir), 2000)
	ws := newCachedMap(root, dir).cacheDir
	files := []string{filepath.Join(ws, "outlines"), filepath.Join(ws, "maps")}
	good := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		good[f] = b
	}
	damage := map[string]func([]byte) []byte{
		"truncated": func(b []byte) []byte { return b[:len(b)*2/3] },
		"flipped":   func(b []byte) []byte { c := append([]byte(nil), b...); c[len(c)-5] ^= 0x20; return c },
		"garbage":   func([]byte) []byte { return []byte("not a cache") },
		"empty":     func([]byte) []byte { return nil },
		"old":       func(b []byte) []byte { return append([]byte("reika repo map cache 1\n"), b[len(cacheMagic):]...) },
	}
	for name, f := range damage {
		for _, which := range [][]string{files, files[1:]} {
			for _, p := range which {
				if err := os.WriteFile(p, f(good[p]), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			out, s := render(t, newCachedMap(root, dir), 2000)
			if out != want || s.Reused || (len(which) == 2 && s.Parsed == 0) {
				t.Errorf("%s %d files: %+v\n%s\n--- want:\n%s", name, len(which), s, out, want)
			}
			if _, s := render(t, newCachedMap(root, dir), 2000); !s.Reused {
				t.Errorf("%s %d files: not rewritten, the next map did not reuse it: %+v", name, len(which), s)
			}
		}
	}
}

// TestRepoMapRacyFile: a file modified within racyWindow of the Render is
// not trusted beyond the process: the next process parses it again and
// ranks anew.
func TestRepoMapRacyFile(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, workspace)
	dir := t.TempDir()
	render(t, newCachedMap(root, dir), 2000)
	rewrite(t, root, "lonely/lonely.go", "package lonely\n\nfunc Lonelier() {}\n", time.Now())
	render(t, newCachedMap(root, dir), 2000)
	if _, s := render(t, newCachedMap(root, dir), 2000); s.Reused || s.Parsed != 1 {
		t.Errorf("a file modified just now was trusted: %+v", s)
	}
}

// TestRepoMapConcurrentProcesses: maps of the same root sharing a cache
// directory (processes) render at once; all give the same map, and the
// cache they leave is whole.
func TestRepoMapConcurrentProcesses(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, workspace)
	dir := t.TempDir()
	want, _ := render(t, NewRepoMap(root), 1500)
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := newCachedMap(root, dir)
			if i%2 == 1 {
				m.Touch("README.md")
			}
			for range 3 {
				out, err := m.Render(1500)
				if err != nil {
					t.Error(err)
				}
				if i%2 == 0 && out != want {
					t.Errorf("concurrent render:\n%s\n--- want:\n%s", out, want)
				}
			}
		}()
	}
	wg.Wait()
	out, s := render(t, newCachedMap(root, dir), 1500)
	if out != want || !s.Reused || s.CacheErr != nil {
		t.Errorf("after concurrent renders: %+v\n%s", s, out)
	}
	m := newCachedMap(root, dir)
	var c diskCache
	if err := readSealed(filepath.Join(m.cacheDir, "outlines"), &c); err != nil || len(c.Files) == 0 {
		t.Errorf("outlines after concurrent renders: %d files, %v", len(c.Files), err)
	}
}

// TestPruneCache: the directories of gone roots, of workspaces unused for
// maxIdle and beyond the keepWorkspaces most recent go, with files of older
// versions and dead writers' temporary files; the workspace in use stays.
func TestPruneCache(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	live := t.TempDir()
	mk := func(name, root string, used time.Time) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(p, 0o755)
		for _, f := range []string{"root", "maps"} {
			os.WriteFile(filepath.Join(p, f), []byte(root), 0o644)
			os.Chtimes(filepath.Join(p, f), used, used)
		}
		return p
	}
	keep := mk("keep", filepath.Join(live, "gone"), now.Add(-100*24*time.Hour))
	gone := mk("gone", filepath.Join(live, "gone"), now)
	idle := mk("idle", live, now.Add(-maxIdle-time.Hour))
	var recent []string
	for i := range keepWorkspaces + 2 {
		recent = append(recent, mk("ws"+string(rune('a'+i)), live, now.Add(-time.Duration(i)*time.Minute)))
	}
	old := filepath.Join(dir, "e773e9a53ba0267d.gob")
	os.WriteFile(old, nil, 0o644)
	deadTmp, liveTmp := filepath.Join(dir, ".maps.reika-1"), filepath.Join(dir, ".maps.reika-2")
	os.WriteFile(deadTmp, nil, 0o644)
	os.Chtimes(deadTmp, now.Add(-2*time.Hour), now.Add(-2*time.Hour))
	os.WriteFile(liveTmp, nil, 0o644)

	pruneCache(dir, "keep", now)
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	for _, p := range []string{gone, idle, old, deadTmp, recent[keepWorkspaces-1], recent[keepWorkspaces+1]} {
		if exists(p) {
			t.Errorf("%s was not pruned", filepath.Base(p))
		}
	}
	for _, p := range append([]string{keep, liveTmp}, recent[:keepWorkspaces-1]...) {
		if !exists(p) {
			t.Errorf("%s was pruned", filepath.Base(p))
		}
	}
}
