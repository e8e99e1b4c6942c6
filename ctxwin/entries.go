package ctxwin

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The entries of an event's message (layout.go): one for each result the
// event sheds, its round, the first line it kept and what its shape keeps
// (shedEntry). A read's outline is what makes an entry long — a few hundred
// to a few thousand bytes — and an event often sheds outlines the model
// can still see, so an entry lists its outline only when the outline's
// declarations are nowhere else in view after the event:
//
//   - when a read the event keeps shows every declaration of the outline,
//     as a newer read of the same file does (each at the same line with the
//     same text as in the file the shed read read), the entry names that
//     read instead ("outline: its declarations are in view in round 40's
//     read"); when that read is shed in turn, its own entry lists them.
//     A fold that takes that read out of view can keep this message (it
//     folds the shed read's round too, and the recap names the file with
//     the lines read), and the outline is then gone with the read: on the
//     bench at 32k, where folds are frequent, retention was 65% with this
//     rule and 64% without it (9 sessions);
//   - when another entry of the message lists every line of the outline,
//     as the whole file's outline does for a read of part of it, or two
//     reads of one file do, the entry names that entry ("outline: as for
//     round 11 above", "outline: within round 11's below"). The entry that
//     lists more keeps its outline; of two alike, the first.
//
// Measured on the bench (`-dump`, 3 sessions at 128k): a third of the
// bytes of the entries' outlines listed declarations in view elsewhere, in
// one of these two ways or in an earlier event's message. Those of earlier
// messages are listed again: a fold may delete the earlier message and
// keep the new one, whose pointer would then name nothing. On 9 sessions
// with chunk reuse: 1.132× the lower bound at 32k instead of 1.150×,
// 1.075× instead of 1.091× at 128k, 1.082× at 16k as before; retention
// 45% (44%), 65% (66%), 79% (78%), the changes per session of both signs.

// entry is one result the event sheds and its entry in full.
type entry struct {
	item, result int
	text         string
	// lines are its outline's lines (nil without one); decls the line
	// ranges they give.
	lines []string
	decls []LineRange
}

// newEntry parses the outline of the entry text of the result of item at
// index result.
func newEntry(item, result int, text string) entry {
	e := entry{item: item, result: result, text: text}
	if i := strings.Index(text, outlineLead); i >= 0 {
		e.lines = strings.Split(text[i+len(outlineLead):], "\n")
		for _, l := range e.lines {
			if m := declLine.FindStringSubmatch(l); m != nil {
				from, _ := strconv.Atoi(m[1])
				to := from
				if m[2] != "" {
					to, _ = strconv.Atoi(m[2])
				}
				e.decls = append(e.decls, LineRange{from, to})
			}
		}
	}
	return e
}

// declLine is an outline's line that gives a declaration's lines
// ("L107-121 func (b *Builder) Grow(n int)", "L12 type T").
var declLine = regexp.MustCompile(`^\s*L(\d+)(?:-(\d+))? `)

// outlineLead starts a read's outline in its entry (shedEntry).
const outlineLead = "\n  outline:\n"

// addEntry adds the entry of the result of item at index result to the
// message, and prices the message's entries again: what one entry writes
// depends on the others and on what the event keeps in view.
func (d *draft) addEntry(item, result int, text string) {
	e := &d.m.est
	if !d.framed {
		d.framed = true
		d.total += e.Tokens(len(RoleUser)+len(contextMark(0))+len(ShedNotice)+len(shedHeading)+80, false) + e.overhead()
	}
	d.entries = append(d.entries, newEntry(item, result, text))
	d.priceEntries()
}

// priceEntries brings the draft's total up to date with what the entries
// write.
func (d *draft) priceEntries() {
	n := 0
	for _, w := range d.writeEntries() {
		n += d.m.est.Tokens(len(w)+1, false)
	}
	d.total += n - d.entryTokens
	d.entryTokens = n
}

// writeEntries is the message's entries as it writes them.
func (d *draft) writeEntries() []string {
	out := make([]string, len(d.entries))
	full := make([]bool, len(d.entries))
	var order []int
	for k, en := range d.entries {
		out[k] = en.text
		if en.lines == nil {
			continue
		}
		if round, ok := d.readInView(en); ok {
			out[k] = d.withoutOutline(en, fmt.Sprintf("its declarations are in view in round %d's read", round))
			continue
		}
		order = append(order, k)
	}
	// The entries that list the most first, so the one an entry names
	// keeps its outline.
	sort.SliceStable(order, func(a, b int) bool { return len(d.entries[order[a]].lines) > len(d.entries[order[b]].lines) })
	for _, k := range order {
		en := d.entries[k]
		j := d.coveringEntry(en, full)
		if j < 0 {
			full[k] = true
			continue
		}
		round := d.m.H.Items[d.entries[j].item].Round
		switch {
		case len(d.entries[j].lines) == len(en.lines) && j < k:
			out[k] = d.withoutOutline(en, fmt.Sprintf("as for round %d above", round))
		case j < k:
			out[k] = d.withoutOutline(en, fmt.Sprintf("within round %d's above", round))
		default:
			out[k] = d.withoutOutline(en, fmt.Sprintf("within round %d's below", round))
		}
	}
	return out
}

// withoutOutline is en's text with its outline replaced by a pointer to
// where the model sees it.
func (d *draft) withoutOutline(en entry, where string) string {
	i := strings.Index(en.text, outlineLead)
	return en.text[:i] + "\n  outline: " + where
}

// coveringEntry is an entry that lists its outline (full) and every line
// of en's, of a read of the same file; -1 when there is none.
func (d *draft) coveringEntry(en entry, full []bool) int {
	path := d.result(en).Path
	for j, o := range d.entries {
		if !full[j] || d.result(o).Path != path || len(o.lines) < len(en.lines) {
			continue
		}
		has := make(map[string]bool, len(o.lines))
		for _, l := range o.lines {
			has[l] = true
		}
		all := true
		for _, l := range en.lines {
			if !has[l] {
				all = false
				break
			}
		}
		if all {
			return j
		}
	}
	return -1
}

func (d *draft) result(en entry) *Result { return d.m.H.Items[en.item].Results[en.result] }

// readInView finds a newer read of en's file that the event keeps in view
// and that shows every declaration of en's outline, each line as the shed
// read's file had it; it returns that read's round.
func (d *draft) readInView(en entry) (int, bool) {
	x := d.result(en)
	h := d.m.H
	if len(en.decls) == 0 || x.Kind != KindRead || x.Path == "" {
		return 0, false
	}
	for i := en.item; i < len(h.Items); i++ {
		if !h.InView(i) || d.dropped[i] || d.foldedNow(i) {
			continue
		}
		for j, r := range h.Items[i].Results {
			if i == en.item && j <= en.result || r.Kind != KindRead || r.Path != x.Path || r.Shed || r.Cut || d.shedNow[[2]int{i, j}] {
				continue
			}
			if d.showsDecls(x, r, en.decls) {
				return h.Items[i].Round, true
			}
		}
	}
	return 0, false
}

// showsDecls reports whether read r shows every range of decls whole, the
// first line of each as read x's file has it.
func (d *draft) showsDecls(x, r *Result, decls []LineRange) bool {
	for _, dl := range decls {
		if dl.From < r.StartLine || dl.To > r.EndLine {
			return false
		}
		a, ok := d.lineOf(x, dl.From)
		if !ok {
			return false
		}
		if b, ok := d.lineOf(r, dl.From); !ok || a != b {
			return false
		}
	}
	return true
}

// lineOf is line n of the file read r read: from the file's bytes when
// they are kept, else from the lines the read shows.
func (d *draft) lineOf(r *Result, n int) (string, bool) {
	if d.fileLines == nil {
		d.fileLines = map[*Result]map[int]string{}
	}
	lines, ok := d.fileLines[r]
	if !ok {
		lines = map[int]string{}
		if r.Source != nil {
			for k, l := range strings.Split(string(r.Source), "\n") {
				lines[k+1] = strings.TrimSuffix(l, "\r")
			}
		} else {
			for _, l := range strings.Split(r.Text, "\n") {
				if m := numberedLine.FindStringSubmatch(l); m != nil {
					k, _ := strconv.Atoi(m[1])
					lines[k] = m[2]
				}
			}
		}
		d.fileLines[r] = lines
	}
	l, ok := lines[n]
	return l, ok
}

// numberedLine is a line as the read tool numbers it ("  107→text").
var numberedLine = regexp.MustCompile(`^\s*(\d+)→(.*)$`)
