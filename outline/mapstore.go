package outline

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Bounds of the cache on disk (see mapcache.go).
const (
	// keepMaps is how many rendered maps a workspace keeps: a few
	// budgets and touched sets (the editor's session and the command
	// line) without one evicting the other.
	keepMaps = 4
	// keepWorkspaces is how many workspaces keep a cache directory.
	keepWorkspaces = 32
	// maxIdle is how long a workspace's cache is kept unused.
	maxIdle = 30 * 24 * time.Hour
	// racyWindow: a file modified this close to a Render may change again
	// without its time or size changing (the file system's timestamps are
	// coarser than a nanosecond), so neither its outline nor a map that
	// includes it is kept beyond the process.
	racyWindow = 2 * time.Second
)

// diskMaps is the content of the maps file: the latest first.
type diskMaps struct {
	Root string
	Maps []diskMap
}

// diskMap is a rendered map and the figures of the Render that made it.
type diskMap struct {
	Key                            [sha256.Size]byte
	Text                           string
	Files, Sources, Skipped, Shown int
}

// mapKey is what a rendered map depends on: the format and the program
// that rendered it, the root, the budget, the touched files in their order
// (latest first), and every file the walk found, with its modification time
// and size, in the walk's (lexical) order. Any change to one of them gives
// another key.
func mapKey(root string, budget int, touched []string, stamps []fileStamp) [sha256.Size]byte {
	h := sha256.New()
	b := fmt.Appendf(nil, "repomap %d %t %s\x00%s\x00%d %d", cacheVersion, hasTreeSitter, executableID(), root, budget, len(touched))
	for _, t := range touched {
		b = append(append(b, 0), t...)
	}
	h.Write(b)
	for _, s := range stamps {
		b = append(append(b[:0], 0), s.rel...)
		b = binary.AppendVarint(binary.AppendVarint(b, s.mtime), s.size)
		h.Write(b)
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}

// executableID names the running program by its path, size and
// modification time, so that a map rendered by another build (which may
// rank or lay out differently) is not reused.
var executableID = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return "?"
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return exe
	}
	return fmt.Sprintf("%s %d %d", exe, fi.Size(), fi.ModTime().UnixNano())
})

// touchedOrder is the touched files, the latest first.
func touchedOrder(touched map[string]int) []string {
	out := make([]string, 0, len(touched))
	for rel := range touched {
		out = append(out, rel)
	}
	slices.SortFunc(out, func(a, b string) int { return touched[b] - touched[a] })
	return out
}

// reuseMap returns the map of key when this process or the cache directory
// has it, and sets m.stats from it.
func (m *RepoMap) reuseMap(key [sha256.Size]byte) (string, bool) {
	if m.last == nil || m.last.Key != key {
		m.readMaps()
		i := slices.IndexFunc(m.maps, func(d diskMap) bool { return d.Key == key })
		if i < 0 {
			return "", false
		}
		m.last = &m.maps[i]
		m.freshen()
	}
	d := m.last
	m.stats = MapStats{Files: d.Files, Cached: d.Sources, Skipped: d.Skipped, Shown: d.Shown, Reused: true}
	return d.Text, true
}

// readMaps reads the maps file into m.maps; a missing or broken file reads
// as none.
func (m *RepoMap) readMaps() {
	m.maps = nil
	if m.cacheDir == "" {
		return
	}
	var c diskMaps
	if err := readSealed(filepath.Join(m.cacheDir, "maps"), &c); err == nil && c.Root == m.absRoot() {
		m.maps = c.Maps
	}
}

// freshen marks the workspace's cache as used (pruneCache keeps the most
// recently used), at most once a day.
func (m *RepoMap) freshen() {
	p := filepath.Join(m.cacheDir, "maps")
	if fi, err := os.Stat(p); err == nil && time.Since(fi.ModTime()) > 24*time.Hour {
		now := time.Now()
		os.Chtimes(p, now, now)
	}
}

// keepMap keeps the map just rendered for key, in memory and in the maps
// file (the latest keepMaps), and prunes the cache directory. A map of a
// tree with a file modified after racy is not kept.
func (m *RepoMap) keepMap(key [sha256.Size]byte, text string, newest, racy int64) error {
	if newest > racy {
		m.last = nil
		return nil
	}
	s := m.stats
	d := diskMap{Key: key, Text: text, Files: s.Files, Sources: s.Cached + s.Parsed, Skipped: s.Skipped, Shown: s.Shown}
	m.last = &d
	if m.cacheDir == "" {
		return nil
	}
	if err := os.MkdirAll(m.cacheDir, 0o700); err != nil {
		return err
	}
	defer lockMaps(m.cacheDir)()
	m.readMaps() // another process may have added one since
	maps := []diskMap{d}
	for _, o := range m.maps {
		if o.Key != key && len(maps) < keepMaps {
			maps = append(maps, o)
		}
	}
	m.maps = maps
	if err := m.writeRoot(); err != nil {
		return err
	}
	if err := writeSealed(filepath.Join(m.cacheDir, "maps"), &diskMaps{Root: m.absRoot(), Maps: maps}); err != nil {
		return err
	}
	pruneCache(filepath.Dir(m.cacheDir), filepath.Base(m.cacheDir), time.Now())
	return nil
}

// pruneCache bounds the cache directory dir: it removes the workspace
// directories (but keep's) whose root is gone or that were not used for
// maxIdle, then all but the keepWorkspaces most recently used, files left
// there by older versions, and temporary files an hour old (a writer that
// died). Errors are ignored: a file that stays is pruned next time.
func pruneCache(dir, keep string, now time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type workspace struct {
		name string
		used time.Time
	}
	var live []workspace
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.Name() == keep {
			continue
		}
		if !e.IsDir() {
			if fi, err := e.Info(); err == nil && (!strings.HasPrefix(e.Name(), ".") || now.Sub(fi.ModTime()) > time.Hour) {
				os.Remove(p)
			}
			continue
		}
		root, err := os.ReadFile(filepath.Join(p, "root"))
		used := lastUse(p)
		if _, serr := os.Stat(string(root)); err != nil || serr != nil || now.Sub(used) > maxIdle {
			if err == nil || now.Sub(used) > time.Hour { // a directory being made has no root yet
				os.RemoveAll(p)
			}
			continue
		}
		live = append(live, workspace{p, used})
	}
	slices.SortFunc(live, func(a, b workspace) int { return b.used.Compare(a.used) })
	for _, w := range live[min(len(live), keepWorkspaces-1):] {
		os.RemoveAll(w.name)
	}
}

// lastUse is when the workspace cache directory p was last written or
// reused: its newest file.
func lastUse(p string) time.Time {
	var t time.Time
	for _, name := range []string{"root", "outlines", "maps"} {
		if fi, err := os.Stat(filepath.Join(p, name)); err == nil && fi.ModTime().After(t) {
			t = fi.ModTime()
		}
	}
	if t.IsZero() {
		if fi, err := os.Stat(p); err == nil {
			t = fi.ModTime()
		}
	}
	return t
}
