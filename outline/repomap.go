package outline

import (
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reika-lsp/reika-lsp/internal/walk"
)

// MapBudget is the repo map's budget in characters for a window of window
// tokens (DESIGN.md §3.2): M = clamp(floor(0.05·W)·4, 3200, 12000). An
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

// scan walks the tree, refreshes the cache and returns the paths of the
// files to map, sorted.
func (m *RepoMap) scan() ([]string, error) {
	type job struct {
		rel string
		f   *mapFile
	}
	var rels []string
	var jobs []job
	seen := map[string]bool{}
	stats := MapStats{}
	m.loadCacheLocked()
	removed := false
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
		if len(seen) >= maxMapFiles {
			return walk.SkipAll
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		seen[rel] = true
		mtime, size := info.ModTime().UnixNano(), info.Size()
		if f := m.files[rel]; f != nil && f.mtime == mtime && f.size == size {
			if f.lang != "" {
				stats.Cached++
			}
			rels = append(rels, rel)
			return nil
		}
		f := &mapFile{mtime: mtime, size: size, lang: Detect(rel, nil)}
		m.files[rel] = f
		rels = append(rels, rel)
		if f.lang != "" {
			jobs = append(jobs, job{rel, f})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("repo map: %w", err)
	}
	for rel := range m.files {
		if !seen[rel] {
			delete(m.files, rel)
			removed = true
		}
	}

	// Outline the new and changed files, one worker per CPU (Parse bounds
	// the parses running at once anyway).
	var wg sync.WaitGroup
	next := make(chan job)
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
	stats.Parsed = len(jobs)
	if len(jobs) > 0 || removed {
		stats.CacheErr = m.saveCacheLocked(rels)
	}

	out := rels[:0]
	for _, rel := range rels {
		if m.files[rel].skip {
			stats.Skipped++
			continue
		}
		out = append(out, rel)
	}
	stats.Files = len(out)
	m.stats = stats
	return out, nil
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

// rank orders the files: the touched ones (latest first), then by a
// PageRank over the reference graph (personalized toward the touched
// files) times a bonus for files modified recently. It also returns, per
// file, how much each of its names is referenced from other files.
func (m *RepoMap) rank(rels []string, touched map[string]int) ([]string, []map[uint32]float64) {
	n := len(rels)
	files := make([]*mapFile, n)
	for i, rel := range rels {
		files[i] = m.files[rel]
	}
	// Who defines what.
	defs := map[uint32][]int32{}
	for i, f := range files {
		for _, d := range f.decls {
			for _, name := range d.names {
				h := nameHashString(name)
				if ds := defs[h]; len(ds) == 0 || ds[len(ds)-1] != int32(i) {
					defs[h] = append(ds, int32(i))
				}
			}
		}
	}
	// How many files mention each defined name: a name most files use
	// (len, get, key) says little about which file they depend on.
	df := map[uint32]int{}
	for _, f := range files {
		for _, r := range f.refs {
			if h := uint32(r >> 32); len(defs[h]) > 0 {
				df[h]++
			}
		}
	}
	// Edges from referencer to definer, weighted by √count, the rarity of
	// the name, and over the number of definers; and how much each
	// definition is referenced.
	type edge struct {
		to int32
		w  float64
	}
	out := make([][]edge, n)
	weights := make([]map[uint32]float64, n)
	acc := map[int32]float64{}
	for i, f := range files {
		clear(acc)
		for _, r := range f.refs {
			h, count := uint32(r>>32), float64(uint32(r))
			ds := defs[h]
			if len(ds) == 0 || len(ds) > maxDefiners {
				continue
			}
			w := math.Sqrt(count) * math.Log(1+float64(n)/float64(df[h])) / float64(len(ds))
			for _, d := range ds {
				if int(d) == i {
					continue
				}
				acc[d] += w
				if weights[d] == nil {
					weights[d] = map[uint32]float64{}
				}
				weights[d][h] += w
			}
		}
		for d, w := range acc {
			out[i] = append(out[i], edge{d, w})
		}
		slices.SortFunc(out[i], func(a, b edge) int { return int(a.to - b.to) })
	}

	// Personalization: every file, and the touched ones much more.
	p := make([]float64, n)
	nt := 0
	for _, rel := range rels {
		if touched[rel] > 0 {
			nt++
		}
	}
	sum := 0.0
	for i, rel := range rels {
		p[i] = 1
		if touched[rel] > 0 {
			p[i] += float64(n) / float64(nt)
		}
		sum += p[i]
	}
	for i := range p {
		p[i] /= sum
	}
	const damping = 0.85
	r := slices.Clone(p)
	next := make([]float64, n)
	for range 30 {
		clear(next)
		dangling := 0.0
		for i := range files {
			total := 0.0
			for _, e := range out[i] {
				total += e.w
			}
			if total == 0 {
				dangling += r[i]
				continue
			}
			for _, e := range out[i] {
				next[e.to] += damping * r[i] * e.w / total
			}
		}
		for i := range next {
			next[i] += (1-damping)*p[i] + damping*dangling*p[i]
		}
		r, next = next, r
	}

	// Recently modified files (relative to the newest, so the result does
	// not depend on the clock) count up to twice.
	var newest int64
	for _, f := range files {
		newest = max(newest, f.mtime)
	}
	const fortnight = float64(14 * 24 * time.Hour)
	score := make([]float64, n)
	for i, f := range files {
		recent := 1 - float64(newest-f.mtime)/fortnight
		score[i] = r[i] * (1 + max(0, recent))
		if isTest(rels[i]) {
			score[i] *= 0.2 // tests reference everything and are rarely what a map is for
		}
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		ta, tb := touched[rels[a]], touched[rels[b]]
		if ta != tb {
			return tb - ta // touched first, latest first
		}
		if score[a] != score[b] {
			if score[a] > score[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(rels[a], rels[b])
	})
	order := make([]string, n)
	ws := make([]map[uint32]float64, n)
	for k, i := range idx {
		order[k] = rels[i]
		ws[k] = weights[i]
	}
	return order, ws
}

// render lays the ranked files out within budget: the first files with the
// signatures of their key declarations (up to about 60% of the budget),
// the next ones with the names of their declarations (up to about 85%),
// then bare paths, and a line counting the files left out.
func (m *RepoMap) render(order []string, weights []map[uint32]float64, budget int) (string, int) {
	limit := budget
	if limit <= 0 {
		limit = math.MaxInt
	}
	reserve := len(moreFiles(len(order))) + 1 // and its newline
	room := func(share int) int {
		if budget <= 0 {
			return math.MaxInt
		}
		return min(budget*share/100, budget-reserve)
	}
	var b strings.Builder
	used, shown := 0, 0
	tier := 1
	add := func(s string) {
		if used > 0 {
			b.WriteByte('\n')
			used++
		}
		b.WriteString(s)
		used += len(s)
	}
	fits := func(s string, lim int) bool {
		sep := 0
		if used > 0 {
			sep = 1
		}
		return used+sep+len(s) <= lim
	}
	for k, rel := range order {
		f := m.files[rel]
		decls := keyDecls(f.decls, weights[k])
		if len(decls) > 0 && tier == 1 {
			var blk strings.Builder
			blk.WriteString(rel)
			for _, d := range decls[:min(len(decls), mapDecls)] {
				blk.WriteString("\n  ")
				blk.WriteString(cut(d.sig, mapLine))
			}
			if fits(blk.String(), room(60)) {
				add(blk.String())
				shown++
				continue
			}
			tier = 2
		}
		if len(decls) > 0 && tier == 2 {
			var names []string
			for _, d := range decls {
				names = append(names, d.names...)
			}
			if len(names) > 0 {
				line := cut(rel+": "+strings.Join(names, ", "), mapLine+20)
				if fits(line, room(85)) {
					add(line)
					shown++
					continue
				}
				tier = 3
			}
		}
		if !fits(rel, room(100)) {
			break
		}
		add(rel)
		shown++
	}
	if shown < len(order) {
		add(moreFiles(len(order) - shown))
	}
	s := b.String()
	if budget > 0 && len(s) > limit {
		// Unreachable: every line was checked against the budget with room
		// for the last one. Never return more than the budget anyway.
		s = s[:strings.LastIndexByte(s[:limit], '\n')+1]
		s = strings.TrimSuffix(s, "\n")
	}
	return s, shown
}

// isTest reports a test file by the conventions of the languages outline
// knows: foo_test.go, test_foo.py, foo_test.py, foo.test.ts, foo.spec.js,
// FooTest.java, foo_spec.rb, or a file under a tests, test, spec or
// __tests__ directory.
func isTest(rel string) bool {
	base := path.Base(rel)
	stem := strings.TrimSuffix(base, path.Ext(base))
	switch {
	case strings.HasSuffix(stem, "_test"), strings.HasPrefix(stem, "test_"), strings.HasSuffix(stem, "_spec"),
		strings.HasSuffix(stem, ".test"), strings.HasSuffix(stem, ".spec"),
		strings.HasSuffix(stem, "Test") && strings.HasSuffix(base, ".java"):
		return true
	}
	for _, dir := range strings.Split(path.Dir(rel), "/") {
		switch dir {
		case "test", "tests", "spec", "__tests__":
			return true
		}
	}
	return false
}

func moreFiles(n int) string {
	return "… " + strconv.Itoa(n) + " more files"
}

// keyDecls orders a file's declarations, public ones first, by how much
// other files reference them, keeping the file's order on a tie, and
// returns them with the chosen first mapDecls back in source order.
func keyDecls(ds []mapDecl, weights map[uint32]float64) []mapDecl {
	if len(ds) == 0 {
		return nil
	}
	type scored struct {
		i int
		w float64
	}
	s := make([]scored, len(ds))
	for i, d := range ds {
		w := 0.0
		for _, name := range d.names {
			w += weights[nameHashString(name)]
		}
		s[i] = scored{i, w}
	}
	slices.SortStableFunc(s, func(a, b scored) int {
		if ma, mb := ds[a.i].minor, ds[b.i].minor; ma != mb {
			if ma {
				return 1
			}
			return -1
		}
		switch {
		case a.w > b.w:
			return -1
		case a.w < b.w:
			return 1
		}
		return 0
	})
	k := min(len(s), mapDecls)
	top := s[:k]
	slices.SortFunc(top, func(a, b scored) int { return a.i - b.i })
	out := make([]mapDecl, 0, len(ds))
	for _, x := range top {
		out = append(out, ds[x.i])
	}
	for _, x := range s[k:] {
		out = append(out, ds[x.i])
	}
	return out
}

// cut shortens s to at most n bytes, ending in "…" when cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	k := n - len("…")
	for k > 0 && !isRuneStart(s[k]) {
		k--
	}
	return strings.TrimRight(s[:k], " ,") + "…"
}
