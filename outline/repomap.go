package outline

import (
	"fmt"
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
// time and size, so rendering an unchanged tree again parses nothing. It is
// safe for concurrent use.
//
// SetCacheFile keeps the cache in a file too, for the next process.
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
	cacheFile   string              // guarded by mu; see SetCacheFile
	cacheLoaded bool                // guarded by mu

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
// and reuses the rest.
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
	touched := make(map[string]int, len(m.touched))
	for k, v := range m.touched {
		touched[k] = v
	}
	m.tmu.Unlock()

	m.mu.Lock()
	defer m.mu.Unlock()
	rels, err := m.scan()
	if err != nil {
		return "", err
	}
	order, weights := m.rank(rels, touched)
	out, shown := m.render(order, weights, 0)
	if budget > 0 && len(out) > budget {
		out, shown = m.render(order, weights, budget)
	}
	m.stats.Shown = shown
	m.stats.Took = time.Since(start)
	return out, nil
}
