package outline

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/reika-lsp/reika-lsp/internal/walk"
)

// scan brings the cache up to date with the files the walk found (loading
// the cache file first, once), parses the new and changed ones, and returns
// the paths of the files to map, in the walk's order (lexical, directory by
// directory). It sets m.stats but for Shown and Took, which Render fills
// in.
func (m *RepoMap) scan(stamps []fileStamp, racy int64) []string {
	m.loadCacheLocked()
	w := m.refresh(stamps)
	removed := m.forgetRemoved(w.seen)
	m.outlineAll(w.jobs)
	stats := MapStats{Cached: w.cached, Parsed: len(w.jobs)}
	if len(w.jobs) > 0 || removed {
		stats.CacheErr = m.saveCacheLocked(w.rels, racy)
	}
	out := w.rels[:0]
	for _, rel := range w.rels {
		if m.files[rel].skip {
			stats.Skipped++
			continue
		}
		out = append(out, rel)
	}
	stats.Files = len(out)
	m.stats = stats
	return out
}

// fileStamp is a file the walk found, with what says it changed.
type fileStamp struct {
	rel         string
	mtime, size int64
}

// mapWalk is what one walk of the tree brings to the cache.
type mapWalk struct {
	rels   []string        // the files to map, in walk order
	seen   map[string]bool // the same, as a set
	jobs   []outlineJob    // the new and changed source files among them
	cached int             // source files whose cached outline still holds
}

// outlineJob is one source file to outline into its cache entry.
type outlineJob struct {
	rel string
	f   *mapFile
}

// walkTree walks the tree as git sees it, up to maxMapFiles files, leaving
// out skipped directories and files and anything that is not a regular
// file, and returns the files with their modification time and size. It
// reads no file.
func (m *RepoMap) walkTree() ([]fileStamp, error) {
	var stamps []fileStamp
	err := walk.Walk(m.root, func(rel string, d fs.DirEntry) error {
		if d.IsDir() {
			if skipDir(d.Name()) {
				return walk.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || skipFile(rel) {
			return nil // symlinks are not followed out of the tree
		}
		if len(stamps) >= maxMapFiles {
			return walk.SkipAll
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		stamps = append(stamps, fileStamp{rel, info.ModTime().UnixNano(), info.Size()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("repo map: %w", err)
	}
	return stamps, nil
}

// refresh matches the walk's files with the cache: a file whose
// modification time and size match its cache entry keeps it; any other gets
// a new entry in m.files, and a job when outline knows its language.
func (m *RepoMap) refresh(stamps []fileStamp) mapWalk {
	w := mapWalk{rels: make([]string, 0, len(stamps)), seen: make(map[string]bool, len(stamps))}
	for _, s := range stamps {
		w.seen[s.rel] = true
		w.rels = append(w.rels, s.rel)
		if f := m.files[s.rel]; f != nil && f.mtime == s.mtime && f.size == s.size {
			if f.lang != "" {
				w.cached++
			}
			continue
		}
		f := &mapFile{mtime: s.mtime, size: s.size, lang: Detect(s.rel, nil)}
		m.files[s.rel] = f
		if f.lang != "" {
			w.jobs = append(w.jobs, outlineJob{s.rel, f})
		}
	}
	return w
}

// forgetRemoved drops the cache entries of files the walk did not see and
// reports whether there were any.
func (m *RepoMap) forgetRemoved(seen map[string]bool) bool {
	removed := false
	for rel := range m.files {
		if !seen[rel] {
			delete(m.files, rel)
			removed = true
		}
	}
	return removed
}

// outlineAll outlines the jobs' files into their entries, one worker per
// CPU (Parse bounds the parses running at once anyway), and returns when
// all are done.
func (m *RepoMap) outlineAll(jobs []outlineJob) {
	var wg sync.WaitGroup
	next := make(chan outlineJob)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				m.outlineFile(j.rel, j.f)
			}
		}()
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
}

// outlineFile reads and outlines one source file into f. A file that cannot
// be read or parsed is listed without declarations.
func (m *RepoMap) outlineFile(rel string, f *mapFile) {
	if f.size > int64(mapLimits.MaxBytes)*4 {
		return // not even worth reading to find references
	}
	src, err := os.ReadFile(filepath.Join(m.root, filepath.FromSlash(rel)))
	if err != nil || IsBinary(src) {
		return
	}
	if IsGenerated(src) {
		f.skip = true
		return
	}
	f.refs = identRefs(src)
	o, err := ParseLimited(rel, src, mapLimits)
	if err != nil {
		return
	}
	for _, e := range o.Entries {
		switch e.Kind {
		case KindImports, KindExports, KindStatement, KindPackage:
			continue
		}
		d := mapDecl{sig: display(e), minor: e.minor}
		d.names = declNames(d.names, e.Name)
		if (e.Kind == KindConst || e.Kind == KindVar) && len(e.Children) > 0 {
			for _, c := range e.Children { // a Go group
				d.names = declNames(d.names, c.Name)
			}
		}
		f.decls = append(f.decls, d)
	}
}

// declNames adds the identifiers of an entry's name to names: "a, b",
// "exports.parse", "W::draw" and "Display for Point<T>" name several.
func declNames(names []string, name string) []string {
	for _, n := range strings.FieldsFunc(name, func(r rune) bool { return r >= 0x80 || !isIdentByte(byte(r)) }) {
		switch n {
		case "for", "exports", "module", "prototype", "default":
			continue
		}
		if len(n) >= minRefLen && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}
