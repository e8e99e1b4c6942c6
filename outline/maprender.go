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
// then bare paths, and a line counting the files left out. It returns the
// text and how many files it shows.
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
	var t mapText
	shown := 0
	tier := 1
	for k, rel := range order {
		f := m.files[rel]
		decls := keyDecls(f.decls, weights[k])
		if len(decls) > 0 && tier == 1 {
			if blk := sigBlock(rel, decls); t.fits(blk, room(60)) {
				t.add(blk)
				shown++
				continue
			}
			tier = 2
		}
		if len(decls) > 0 && tier == 2 {
			if line := namesLine(rel, decls); line != "" {
				if t.fits(line, room(85)) {
					t.add(line)
					shown++
					continue
				}
				tier = 3
			}
		}
		if !t.fits(rel, room(100)) {
			break
		}
		t.add(rel)
		shown++
	}
	if shown < len(order) {
		t.add(moreFiles(len(order) - shown))
	}
	s := t.b.String()
	if budget > 0 && len(s) > limit {
		// Only when the budget is smaller than the last line itself: every
		// other line was checked against the budget with room for the
		// last one. Never return more than the budget.
		s = s[:strings.LastIndexByte(s[:limit], '\n')+1]
		s = strings.TrimSuffix(s, "\n")
	}
	return s, shown
}

// mapText is the map's text as it is laid out, line by line.
type mapText struct {
	b    strings.Builder
	used int // bytes written
}

// add appends a line (or a block of lines).
func (t *mapText) add(s string) {
	if t.used > 0 {
		t.b.WriteByte('\n')
		t.used++
	}
	t.b.WriteString(s)
	t.used += len(s)
}

// fits reports whether adding s keeps the text within lim bytes.
func (t *mapText) fits(s string, lim int) bool {
	sep := 0
	if t.used > 0 {
		sep = 1
	}
	return t.used+sep+len(s) <= lim
}

// sigBlock is a file's block of the first tier: its path, then the
// signatures of its first mapDecls key declarations, indented, each cut to
// mapLine bytes.
func sigBlock(rel string, decls []mapDecl) string {
	var blk strings.Builder
	blk.WriteString(rel)
	for _, d := range decls[:min(len(decls), mapDecls)] {
		blk.WriteString("\n  ")
		blk.WriteString(cut(d.sig, mapLine))
	}
	return blk.String()
}

// namesLine is a file's line of the second tier, cut to mapLine+20 bytes:
// its path and the names of its declarations, key ones first; "" when
// they name nothing.
func namesLine(rel string, decls []mapDecl) string {
	var names []string
	for _, d := range decls {
		names = append(names, d.names...)
	}
	if len(names) == 0 {
		return ""
	}
	return cut(rel+": "+strings.Join(names, ", "), mapLine+20)
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
