package outline

import (
	"math"
	"path"
	"slices"
	"strings"
	"time"
)

// rank orders the files: the touched ones (latest first), then by a
// PageRank over the reference graph (personalized toward the touched
// files) times a bonus for files modified recently. It also returns, per
// file, how much each of its names is referenced from other files.
func (m *RepoMap) rank(rels []string, touched map[string]int) ([]string, []map[uint32]float64) {
	files := make([]*mapFile, len(rels))
	for i, rel := range rels {
		files[i] = m.files[rel]
	}
	defs := definers(files)
	out, weights := refGraph(files, defs, mentions(files, defs))
	r := pageRank(out, personalization(rels, touched))
	return rankOrder(rels, touched, fileScores(rels, files, r), weights)
}

// definers maps the hash of each declared name to the indexes of the files
// that declare it, in file order, each file once.
func definers(files []*mapFile) map[uint32][]int32 {
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
	return defs
}

// mentions counts, for each defined name, the files that reference it: a
// name most files use (len, get, key) says little about which file they
// depend on.
func mentions(files []*mapFile, defs map[uint32][]int32) map[uint32]int {
	df := map[uint32]int{}
	for _, f := range files {
		for _, r := range f.refs {
			if h := uint32(r >> 32); len(defs[h]) > 0 {
				df[h]++
			}
		}
	}
	return df
}

// refEdge is an edge of the reference graph, from the file that references
// a name to file to, of weight w.
type refEdge struct {
	to int32
	w  float64
}

// refGraph returns, per file, its edges to the files that define the names
// it references, sorted by target; an edge weighs √count times the rarity
// of the name (log(1+files/mentions)) over the number of definers, summed
// over the names, and a name with more than maxDefiners definers links
// nothing. It also returns, per file, how much each name it defines is
// referenced from the other files (nil for a file nobody references).
func refGraph(files []*mapFile, defs map[uint32][]int32, df map[uint32]int) ([][]refEdge, []map[uint32]float64) {
	n := len(files)
	out := make([][]refEdge, n)
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
			out[i] = append(out[i], refEdge{d, w})
		}
		slices.SortFunc(out[i], func(a, b refEdge) int { return int(a.to - b.to) })
	}
	return out, weights
}

// personalization is PageRank's teleport distribution: every file weighs
// 1 and the touched ones share len(rels) more, scaled to sum to 1.
func personalization(rels []string, touched map[string]int) []float64 {
	n := len(rels)
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
	return p
}

// pageRank runs 30 iterations of PageRank (damping 0.85) over the weighted
// graph out from the distribution p; a file without edges spreads its rank
// as p does.
func pageRank(out [][]refEdge, p []float64) []float64 {
	const damping = 0.85
	r := slices.Clone(p)
	next := make([]float64, len(p))
	for range 30 {
		clear(next)
		dangling := 0.0
		for i := range out {
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
	return r
}

// fileScores weighs each file's rank r: recently modified files (relative
// to the newest, so the result does not depend on the clock) count up to
// twice, and tests a fifth.
func fileScores(rels []string, files []*mapFile, r []float64) []float64 {
	var newest int64
	for _, f := range files {
		newest = max(newest, f.mtime)
	}
	const fortnight = float64(14 * 24 * time.Hour)
	score := make([]float64, len(files))
	for i, f := range files {
		recent := 1 - float64(newest-f.mtime)/fortnight
		score[i] = r[i] * (1 + max(0, recent))
		if isTest(rels[i]) {
			score[i] *= 0.2 // tests reference everything and are rarely what a map is for
		}
	}
	return score
}

// rankOrder sorts the files, touched first (latest first), then by score,
// then by path, and returns them with their reference weights in the same
// order.
func rankOrder(rels []string, touched map[string]int, score []float64, weights []map[uint32]float64) ([]string, []map[uint32]float64) {
	n := len(rels)
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
