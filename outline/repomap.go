package outline

import (
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// MapBudget is the repo map's budget in characters for a window of window
// tokens (docs/design.md §3.2): M = clamp(floor(0.05·W)·4, 3200, 12000). An
// unknown window (0) gets the minimum.
func MapBudget(window int) int {
	return min(max(window/20*4, 3200), 12000)
}

// Limits of the repo map.
const (
	// maxMapFiles stops the walk of a huge tree.
	maxMapFiles = 100_000
	// maxDefiners: a name defined in more files than this links nothing
	// (String, Close, run...).
	maxDefiners = 8
	// mapDecls is how many declarations a file shows with their signature.
	mapDecls = 5
	// mapLine bounds one line of the map.
	mapLine = 100
)

// mapLimits bound the parse of one file for the map: larger files are
// listed without their declarations.
var mapLimits = Limits{Timeout: DefaultLimits.Timeout, MaxBytes: 1 << 20}

// RepoMap is the repo map of one workspace: its files, ranked so that the
// ones the session touched, the most referenced and the most recently
// modified come first, with their key declarations, within a character
// budget. It keeps each file's outline and references keyed by modification
// time and size, so rendering an unchanged tree again parses nothing, and
// its last map keyed by everything it depends on (mapKey), so rendering an
// unchanged tree again with the same touches and budget ranks nothing
// either. It is safe for concurrent use.
//
// SetCacheDir keeps both on disk too, for the next process.
//
// The map respects .gitignore and skips hidden and vendored directories
// (vendor/, node_modules/, third_party/, testdata/...), lockfiles, assets,
// and generated or minified files. The same tree and the same touches give
// the same bytes.
type RepoMap struct {
	root string

	mu          sync.Mutex          // held by Render
	files       map[string]*mapFile // guarded by mu; by slash path relative to root
	stats       MapStats            // guarded by mu
	cacheDir    string              // guarded by mu; this workspace's, see SetCacheDir
	cacheLoaded bool                // guarded by mu; the outlines file was read
	maps        []diskMap           // guarded by mu; the maps file as last read or written
	last        *diskMap            // guarded by mu; the last map rendered or reused

	tmu     sync.Mutex
	touched map[string]int // guarded by tmu; path → tick of its last Touch
	tick    int            // guarded by tmu
}

// MapStats describe the last Render.
type MapStats struct {
	Files   int           // files the map considered (after skipping)
	Parsed  int           // new or changed source files read by this Render
	Cached  int           // source files whose outline came from the cache
	Skipped int           // generated or minified files left out
	Shown   int           // files in the rendering
	Took    time.Duration // the whole Render
	// Reused: the map itself came from the cache (of this process or the
	// cache directory); nothing was parsed or ranked, and the figures
	// above are those of the Render that made it.
	Reused bool
	// CacheErr is why the cache file could not be written, if it could
	// not (the map is rendered anyway).
	CacheErr error
}

type mapFile struct {
	mtime, size int64
	lang        string
	decls       []mapDecl
	refs        []uint64 // identRefs
	skip        bool     // generated or minified: left out
}

// mapDecl is a top-level declaration as the map shows it.
type mapDecl struct {
	sig   string
	names []string // what references to it are counted by
	minor bool
}

// NewRepoMap returns the repo map of the workspace at root. Nothing is read
// before the first Render.
func NewRepoMap(root string) *RepoMap {
	return &RepoMap{root: root, files: map[string]*mapFile{}, touched: map[string]int{}}
}

// Touch records that the session touched the file at rel (relative to the
// root, or absolute inside it): touched files come first, the latest
// first, and the files they reference rank higher.
func (m *RepoMap) Touch(rel string) {
	if filepath.IsAbs(rel) {
		r, err := filepath.Rel(m.root, rel)
		if err != nil {
			return
		}
		rel = r
	}
	rel = path.Clean(filepath.ToSlash(rel))
	if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || strings.HasPrefix(rel, "/") {
		return
	}
	m.tmu.Lock()
	defer m.tmu.Unlock()
	m.tick++
	m.touched[rel] = m.tick
}

// Stats returns the figures of the last Render.
func (m *RepoMap) Stats() MapStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stats
}

// Render returns the repo map within budget characters (bytes); budget <= 0
// means no limit. It parses the files that changed since the last Render
// and reuses the rest; when nothing it depends on changed (the files, the
// touches, the budget: see mapKey), it returns the map it kept without
// ranking again.
//
// The top files are listed with the signatures of their key declarations,
// the next ones with the names of their declarations, then bare paths; a
// last line counts the files left out:
//
//	net/http/server.go
//	  type Handler interface
//	  func ListenAndServe(addr string, handler Handler) error
//	net/url/url.go: URL, Values, Parse, QueryEscape
//	internal/godebug/godebug.go
//	… 812 more files
func (m *RepoMap) Render(budget int) (string, error) {
	start := time.Now()
	fi, err := os.Stat(m.root)
	if err != nil {
		return "", fmt.Errorf("repo map: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("repo map: %s is not a directory", m.root)
	}
	m.tmu.Lock()
	touched := touchedOrder(m.touched)
	ticks := maps.Clone(m.touched)
	m.tmu.Unlock()

	m.mu.Lock()
	defer m.mu.Unlock()
	stamps, err := m.walkTree()
	if err != nil {
		return "", err
	}
	key := mapKey(m.absRoot(), budget, touched, stamps)
	if out, ok := m.reuseMap(key); ok {
		m.stats.Took = time.Since(start)
		return out, nil
	}
	racy := start.Add(-racyWindow).UnixNano()
	rels := m.scan(stamps, racy)
	order, weights := m.rank(rels, ticks)
	out, shown := m.render(order, weights, 0)
	if budget > 0 && len(out) > budget {
		out, shown = m.render(order, weights, budget)
	}
	m.stats.Shown = shown
	if err := m.keepMap(key, out, newest(stamps), racy); err != nil && m.stats.CacheErr == nil {
		m.stats.CacheErr = err
	}
	m.stats.Took = time.Since(start)
	return out, nil
}

// newest is the latest modification time of the files.
func newest(stamps []fileStamp) int64 {
	var t int64
	for _, s := range stamps {
		t = max(t, s.mtime)
	}
	return t
}
