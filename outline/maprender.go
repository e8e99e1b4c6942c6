package outline

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

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

// moreFiles is the map's last line when n files were left out.
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
