package ctxwin

// The recap (docs/design.md §3.8): what a fold leaves of the items it folds, in
// the message of its event. It is led by the note, which stays above it as
// the note round's reply; then the task, which it refers to (the prompt of
// the turn in progress and the results that define it stay where they
// are, so the recap never repeats them); earlier notes and requests; the
// files touched with the line ranges read; the pages fetched and the
// searches run; and what happened, newest first, until its budget runs
// out: the replies, edits, commands and errors, since the lists above
// name the reads, searches and pages (the bench's figures for this order:
// bench/README.md, "Figures behind reika's choices").
// A new recap absorbs the one before it.

import (
	"fmt"
	"sort"
	"strings"
)

// Recap is what a fold leaves of the items it folds: one message that
// leads with the model's note. A new recap absorbs the previous one, so
// recaps never stack.
type Recap struct {
	// Text is the recap as the model sees it.
	Text string `json:"text"`
	// Note is what the model wrote it had established, before the fold.
	Note string `json:"note,omitempty"`
	// EarlierNotes are the notes of the recaps this one absorbed, newest first.
	EarlierNotes []string `json:"earlierNotes,omitempty"`
	// TaskAbove says the prompt of turn TaskTurn, the turn in progress,
	// stays in view above the recap with the results that define its task;
	// NoteAbove that the note does, as the note round's reply.
	TaskAbove bool `json:"taskAbove,omitempty"`
	NoteAbove bool `json:"noteAbove,omitempty"`
	// Task is the prompt of turn TaskTurn, verbatim, and TaskResults its
	// task-defining results, when a fold took them out of view: recaps
	// logged before the task stayed in place have them.
	Task        string   `json:"task,omitempty"`
	TaskTurn    int      `json:"taskTurn,omitempty"`
	TaskResults []string `json:"taskResults,omitempty"`
	// Requests are the user's earlier folded prompts, newest first.
	Requests []string `json:"requests,omitempty"`
	// Events is what happened in the folded items, newest first.
	Events []string `json:"events,omitempty"`
	// Files are the files touched, with the line ranges read.
	Files []FileTouch `json:"files,omitempty"`
	// Pages fetched and searches run, newest first.
	Pages    []string `json:"pages,omitempty"`
	Searches []string `json:"searches,omitempty"`
	// FirstRound and LastRound are the rounds folded so far; Turns the
	// last turn folded.
	FirstRound int `json:"firstRound,omitempty"`
	LastRound  int `json:"lastRound,omitempty"`
}

// FileTouch is one file the folded items touched.
type FileTouch struct {
	Path    string      `json:"path"`
	Read    []LineRange `json:"read,omitempty"`
	Edited  bool        `json:"edited,omitempty"`
	Written bool        `json:"written,omitempty"`
}

// LineRange is a 1-based inclusive range of lines.
type LineRange struct{ From, To int }

// buildRecap folds items (the oldest first) into a recap that absorbs old.
// currentTurn is the turn in progress: its prompt is the task, which stays
// in view when taskAbove. noteAbove says the note stays in view above the
// recap.
func buildRecap(old *Recap, items []*Item, note string, currentTurn int, taskAbove, noteAbove bool) *Recap {
	rc := &Recap{Note: strings.TrimSpace(note), TaskAbove: taskAbove, NoteAbove: noteAbove && strings.TrimSpace(note) != ""}
	if taskAbove {
		rc.TaskTurn = currentTurn
	}
	if old != nil {
		rc.FirstRound = old.FirstRound
		rc.LastRound = old.LastRound
	}
	rc.events(items, currentTurn)
	rc.touches(items)
	if old != nil {
		rc.absorb(old, currentTurn)
	}
	return rc
}

// events lists what happened in items, newest first, and takes up the
// prompts they hold: the task's (the turn in progress) and earlier
// requests.
func (rc *Recap) events(items []*Item, currentTurn int) {
	for i := len(items) - 1; i >= 0; i-- {
		it := items[i]
		if !it.IsRound() {
			if it.Turn == currentTurn {
				rc.Task, rc.TaskTurn = it.Prompt, it.Turn
				rc.Events = append(rc.Events, fmt.Sprintf("turn %d began with the task above", it.Turn))
			} else {
				rc.Requests = append(rc.Requests, it.Prompt)
				rc.Events = append(rc.Events, fmt.Sprintf("turn %d began: the user asked %s", it.Turn, quote(it.Prompt, 160)))
			}
			continue
		}
		if rc.FirstRound == 0 || it.Round < rc.FirstRound {
			rc.FirstRound = it.Round
		}
		rc.LastRound = max(rc.LastRound, it.Round)
		// Results newest first within the round, then the reply.
		for j := len(it.Results) - 1; j >= 0; j-- {
			r := it.Results[j]
			if !listedElsewhere(r) {
				rc.Events = append(rc.Events, fmt.Sprintf("r%d %s", it.Round, eventLine(r)))
			}
			if r.Task && it.Turn == currentTurn {
				rc.TaskResults = append(rc.TaskResults, r.Text) // a turn's task, out of view
			}
		}
		if c := strings.TrimSpace(it.Assistant.Content); c != "" {
			rc.Events = append(rc.Events, fmt.Sprintf("r%d assistant: %s", it.Round, quote(c, 240)))
		}
	}
}

// listedElsewhere reports whether the recap's other lists say all that
// r's line in what happened would: a read is in the files touched with its
// lines, a search in the searches run, a page in the pages fetched. An
// error, an edit or a command is told where it happened.
func listedElsewhere(r *Result) bool {
	if r.IsError {
		return false
	}
	switch r.Kind {
	case KindRead:
		return r.Path != ""
	case KindGrep, KindGlob:
		return true
	case KindFetch:
		return r.URL != ""
	}
	return false
}

// touches lists the files items touched, with the line ranges read, and
// the pages and searches, oldest first so ranges merge in order.
func (rc *Recap) touches(items []*Item) {
	files := map[string]*FileTouch{}
	var order []string
	touch := func(path string) *FileTouch {
		f, ok := files[path]
		if !ok {
			f = &FileTouch{Path: path}
			files[path] = f
			order = append(order, path)
		}
		return f
	}
	for _, it := range items {
		for _, r := range it.Results {
			if r.IsError {
				continue
			}
			switch r.Kind {
			case KindRead:
				if r.Path != "" {
					f := touch(r.Path)
					if r.StartLine > 0 {
						f.Read = mergeRange(f.Read, LineRange{r.StartLine, r.EndLine})
					}
				}
			case KindEdit, KindWrite:
				if r.Path != "" {
					f := touch(r.Path)
					f.Edited = f.Edited || r.Kind == KindEdit
					f.Written = f.Written || r.Kind == KindWrite
				}
			case KindFetch:
				if r.URL != "" {
					rc.Pages = prependUnique(rc.Pages, r.URL)
				}
			case KindGrep, KindGlob:
				s := r.Summary
				if s == "" {
					s = r.Tool + " " + r.Query
				}
				rc.Searches = prependUnique(rc.Searches, s)
			}
		}
	}
	for _, p := range order {
		rc.Files = append(rc.Files, *files[p])
	}
}

// absorb takes up the recap before: its note becomes an earlier note, its
// lists follow the new ones.
func (rc *Recap) absorb(old *Recap, currentTurn int) {
	if old.Note != "" {
		rc.EarlierNotes = append(rc.EarlierNotes, old.Note)
	}
	rc.EarlierNotes = append(rc.EarlierNotes, old.EarlierNotes...)
	rc.Events = append(rc.Events, old.Events...)
	// The old task stays the task while its turn runs; after, it is an
	// earlier request.
	switch {
	case old.Task != "" && old.TaskTurn == currentTurn && rc.Task == "":
		rc.Task, rc.TaskTurn = old.Task, old.TaskTurn
	case old.Task != "" && old.TaskTurn != currentTurn:
		rc.Requests = append(rc.Requests, old.Task)
	}
	rc.Requests = append(rc.Requests, old.Requests...)
	if old.TaskTurn == currentTurn {
		rc.TaskResults = append(rc.TaskResults, old.TaskResults...)
	}
	rc.Files = mergeFiles(old.Files, rc.Files)
	for i := len(old.Pages) - 1; i >= 0; i-- {
		rc.Pages = appendUnique(rc.Pages, old.Pages[i])
	}
	for _, s := range old.Searches {
		rc.Searches = appendUnique(rc.Searches, s)
	}
}

// render writes the recap's Text within about budget bytes (plus a task
// definition it keeps verbatim, when the task is out of view): the note
// (cut to 30% of the budget) unless it stays above, the task; then earlier
// notes and requests, files, pages and searches within their shares; then
// events, newest first, until the budget runs out.
func (rc *Recap) render(budget int) {
	var b strings.Builder
	fmt.Fprintf(&b, "<recap>\nRounds %d-%d of this session were folded into this recap to fit the context window. Their full results are gone; run a tool again to see one.\n", rc.FirstRound, rc.LastRound)
	if rc.NoteAbove {
		b.WriteString("Your note above, written before the fold, says what was established.\n")
	}
	if rc.TaskAbove && rc.Task == "" && len(rc.TaskResults) == 0 {
		fmt.Fprintf(&b, "\n## Task\nThe request of turn %d above is the task; it and the results that define it stay where they were.\n", rc.TaskTurn)
	}
	if rc.Note != "" && !rc.NoteAbove {
		b.WriteString("\n## Note written before the fold\n")
		b.WriteString(capText(rc.Note, budget*3/10))
		b.WriteString("\n")
	}
	// The task definition is kept verbatim whatever its size; the budget
	// applies to the rest.
	budget += rc.writeTask(&b)
	var files []string
	for i := len(rc.Files) - 1; i >= 0; i-- {
		files = append(files, rc.Files[i].String())
	}
	writeList(&b, "Earlier notes (newest first)", quoteAll(rc.EarlierNotes, 600), budget*15/100)
	writeList(&b, "Earlier requests (newest first)", quoteAll(rc.Requests, 300), budget*10/100)
	writeList(&b, "Files touched", files, budget*15/100)
	writeList(&b, "Pages fetched", rc.Pages, budget*5/100)
	writeList(&b, "Searches run", rc.Searches, budget*5/100)
	const end = "</recap>"
	rest := budget - b.Len() - len(end) - 40
	writeList(&b, "What happened (newest first)", rc.Events, rest)
	b.WriteString(end)
	rc.Text = b.String()
}

// writeTask writes the task definition verbatim, when the recap keeps one,
// and returns the bytes it took.
func (rc *Recap) writeTask(b *strings.Builder) int {
	if rc.Task == "" && len(rc.TaskResults) == 0 {
		return 0
	}
	start := b.Len()
	b.WriteString("\n## Task (verbatim)\n")
	if rc.Task != "" {
		b.WriteString(rc.Task)
		b.WriteString("\n")
	}
	for _, t := range rc.TaskResults {
		b.WriteString("\n— task-defining result —\n")
		b.WriteString(t)
		b.WriteString("\n")
	}
	return b.Len() - start
}

// writeList writes a titled list of lines within share bytes, saying how
// many more did not fit; nothing when none fits.
func writeList(b *strings.Builder, title string, lines []string, share int) {
	if len(lines) == 0 {
		return
	}
	var l strings.Builder
	n := 0
	for _, s := range lines {
		line := "- " + s + "\n"
		if l.Len()+len(line) > share {
			break
		}
		l.WriteString(line)
		n++
	}
	if n == 0 {
		return
	}
	fmt.Fprintf(b, "\n## %s\n%s", title, l.String())
	if n < len(lines) {
		fmt.Fprintf(b, "- … %d more\n", len(lines)-n)
	}
}

func (f FileTouch) String() string {
	var parts []string
	if len(f.Read) > 0 {
		var rs []string
		for _, r := range f.Read {
			rs = append(rs, fmt.Sprintf("%d-%d", r.From, r.To))
		}
		parts = append(parts, "read lines "+strings.Join(rs, ", "))
	}
	if f.Written {
		parts = append(parts, "written")
	}
	if f.Edited {
		parts = append(parts, "edited")
	}
	if len(parts) == 0 {
		return f.Path
	}
	return f.Path + ": " + strings.Join(parts, "; ")
}

// eventLine is one line for a folded result.
func eventLine(r *Result) string {
	s := r.Summary
	if s == "" {
		s = r.Tool + ": " + shortLine(r.Text, 160)
	}
	if r.IsError {
		s += " (error: " + shortLine(r.Text, 160) + ")"
	}
	return s
}

// shortLine is the first line of s, at most n bytes.
func shortLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > n {
		s = s[:validCut(s, n)] + "…"
	}
	return s
}

// capText keeps text whole up to n bytes, else its start and end.
func capText(text string, n int) string {
	if len(text) <= n {
		return text
	}
	return CutText(text, n, func(lines, bytes int) string {
		return fmt.Sprintf("\n[… %d bytes cut to fit the recap …]\n", bytes)
	})
}

func quoteAll(s []string, n int) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = quote(x, n)
	}
	return out
}

func quote(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:validCut(s, n)] + "…"
	}
	return `"` + s + `"`
}

func mergeRange(rs []LineRange, r LineRange) []LineRange {
	if r.To < r.From {
		r.To = r.From
	}
	rs = append(rs, r)
	sort.Slice(rs, func(i, j int) bool { return rs[i].From < rs[j].From })
	out := rs[:1]
	for _, x := range rs[1:] {
		last := &out[len(out)-1]
		if x.From <= last.To+1 {
			last.To = max(last.To, x.To)
		} else {
			out = append(out, x)
		}
	}
	return out
}

// mergeFiles merges newer touches into older ones, keeping first-touch order.
func mergeFiles(older, newer []FileTouch) []FileTouch {
	out := append([]FileTouch(nil), older...)
	for _, n := range newer {
		found := false
		for i := range out {
			if out[i].Path == n.Path {
				for _, r := range n.Read {
					out[i].Read = mergeRange(out[i].Read, r)
				}
				out[i].Edited = out[i].Edited || n.Edited
				out[i].Written = out[i].Written || n.Written
				found = true
				break
			}
		}
		if !found {
			out = append(out, n)
		}
	}
	return out
}

func prependUnique(s []string, x string) []string {
	if contains(s, x) {
		return s
	}
	return append([]string{x}, s...)
}

func appendUnique(s []string, x string) []string {
	if contains(s, x) {
		return s
	}
	return append(s, x)
}
