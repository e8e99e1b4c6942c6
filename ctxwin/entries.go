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
//     the lines read), and the outline is then gone with the read, which
//     the bench found worth it (bench/README.md);
//   - when another entry of the message lists every line of the outline,
//     as the whole file's outline does for a read of part of it, or two
//     reads of one file do, the entry names that entry ("outline: as for
//     round 11 above", "outline: within round 11's below"). The entry that
//     lists more keeps its outline; of two alike, the first.
//
// Outlines in view in an earlier event's message are listed again: a fold
// may delete the earlier message and keep the new one, whose pointer would
// then name nothing. What the rules save, measured on the bench:
// bench/README.md, "Figures behind reika's choices".

// entry is one result the event sheds and its entry in full.
type entry struct {
	item, result int
	text         string
	// path is the file of a read with an outline; lines are its outline's
	// lines (nil without one), decls the line ranges they give.
	path  string
	lines []string
	has   map[string]bool
	decls []LineRange
	// cover is the read in view that shows the outline's declarations,
	// found says whether it was looked for and what was found: the reads
	// a draft keeps in view only ever lessen, so one found none for good.
	cover [2]int
	found int8 // 0 not looked for, 1 cover, -1 none
}

// newEntry parses the outline of the entry text of the result r of item
// at index result.
func newEntry(item, result int, r *Result, text string) entry {
	e := entry{item: item, result: result, text: text}
	if i := strings.Index(text, outlineLead); i >= 0 && r.Kind == KindRead && r.Path != "" {
		e.path = r.Path
		e.lines = strings.Split(text[i+len(outlineLead):], "\n")
		e.has = make(map[string]bool, len(e.lines))
		for _, l := range e.lines {
			e.has[l] = true
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
// message, and prices it. What an entry with an outline writes depends on
// the entries of reads of the same file and on the reads of that file the
// event keeps in view, so those of its file are priced again with it.
func (d *draft) addEntry(item, result int, text string) {
	e := &d.m.est
	if !d.framed {
		d.framed = true
		d.total += e.Tokens(len(RoleUser)+len(contextMark(0))+len(ShedNotice)+len(shedHeading)+80, false) + e.overhead()
	}
	en := newEntry(item, result, d.m.H.Items[item].Results[result], text)
	d.entries = append(d.entries, en)
	if en.path == "" {
		d.total += e.Tokens(len(text)+1, false)
		return
	}
	if d.fileTokens == nil {
		d.fileTokens = map[string]int{}
	}
	n := 0
	for _, w := range d.writeFile(en.path) {
		n += e.Tokens(len(w)+1, false)
	}
	d.total += n - d.fileTokens[en.path]
	d.fileTokens[en.path] = n
}

// writeEntries is the message's entries as it writes them.
func (d *draft) writeEntries() []string {
	out := make([]string, len(d.entries))
	done := map[string]bool{}
	for k, en := range d.entries {
		if en.path == "" {
			out[k] = en.text
			continue
		}
		if done[en.path] {
			continue
		}
		done[en.path] = true
		for j, w := range d.writeFile(en.path) {
			out[j] = w
		}
	}
	return out
}

// writeFile is what the entries with an outline of file path write, by
// their index in the message.
func (d *draft) writeFile(path string) map[int]string {
	out := map[int]string{}
	var order []int
	for k, en := range d.entries {
		if en.path != path {
			continue
		}
		out[k] = en.text
		if round, ok := d.readInView(k); ok {
			out[k] = d.withoutOutline(en, fmt.Sprintf("its declarations are in view in round %d's read", round))
			continue
		}
		order = append(order, k)
	}
	// The entries that list the most first, so the one an entry names
	// keeps its outline.
	sort.SliceStable(order, func(a, b int) bool { return len(d.entries[order[a]].lines) > len(d.entries[order[b]].lines) })
	var full []int
	for _, k := range order {
		en := d.entries[k]
		j := d.coveringEntry(en, full)
		if j < 0 {
			full = append(full, k)
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

// coveringEntry is one of the entries full (which list their outlines)
// that lists every line of en's outline; -1 when there is none.
func (d *draft) coveringEntry(en entry, full []int) int {
	for _, j := range full {
		o := d.entries[j]
		if len(o.lines) < len(en.lines) {
			continue
		}
		all := true
		for _, l := range en.lines {
			if !o.has[l] {
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

// readInView finds a newer read of the file of entry k that the event
// keeps in view and that shows every declaration of its outline, each line
// as the shed read's file had it; it returns that read's round.
func (d *draft) readInView(k int) (int, bool) {
	en := &d.entries[k]
	h := d.m.H
	if len(en.decls) == 0 || en.found < 0 {
		return 0, false
	}
	if en.found > 0 && d.keeps(en.cover) {
		return h.Items[en.cover[0]].Round, true
	}
	x := d.result(*en)
	for _, at := range d.readsOf(en.path) {
		if at[0] < en.item || at[0] == en.item && at[1] <= en.result || !d.keeps(at) {
			continue
		}
		if d.showsDecls(x, h.Items[at[0]].Results[at[1]], en.decls) {
			en.cover, en.found = at, 1
			return h.Items[at[0]].Round, true
		}
	}
	en.found = -1
	return 0, false
}

// keeps reports whether the event keeps in view, whole, the result at.
func (d *draft) keeps(at [2]int) bool {
	i := at[0]
	r := d.m.H.Items[i].Results[at[1]]
	return d.m.H.InView(i) && !d.dropped[i] && !d.foldedNow(i) && !r.Shed && !r.Cut && !d.shedNow[at]
}

// readsOf lists the reads of file path in the history, oldest first, as
// item and result indexes.
func (d *draft) readsOf(path string) [][2]int {
	if d.reads == nil {
		d.reads = map[string][][2]int{}
		for i, it := range d.m.H.Items {
			for j, r := range it.Results {
				if r.Kind == KindRead && r.Path != "" {
					d.reads[r.Path] = append(d.reads[r.Path], [2]int{i, j})
				}
			}
		}
	}
	return d.reads[path]
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
