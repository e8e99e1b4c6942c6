package ctxwin

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ThrashLimit is how many shrinks in a row may make no progress before the
// turn stops.
const ThrashLimit = 3

// Progress is the thrash guard (docs/design.md §4). A shrink makes no progress
// when the results of the rounds since the shrink before it mostly fetched
// again what that one removed (the same file and an overlapping line range,
// the same command or search), or when what no shrink can remove, the
// fixed prefix and the task, stands above the shed point: every shrink then
// sheds whatever the last round brought, and nothing is left for the work.
// An edit, a write or an error is a result that fetched nothing, and so
// never a fetch again. A shrink that frees little is not a stall: on a
// small window, or where tokens are dense and nothing counts them, each
// round's new read can refill the room a shrink made, and the work goes on
// (issue 27). A refill within a few rounds is not a sign of trouble either:
// every shrink goes down to the shed target, and on a small window a few
// reads refill it. ThrashLimit shrinks in a row without progress stop the
// turn.
type Progress struct {
	// Removed is what the last shrink took out of view, and Round the round
	// it came after.
	Removed []Fetch `json:"removed,omitempty"`
	Round   int     `json:"round,omitempty"`
	// Stalled counts the shrinks in a row that made no progress.
	Stalled int `json:"stalled,omitempty"`
	// Of the last shrink without progress: Again is what the rounds before
	// it fetched again; Floor the fixed prefix and the task, in tokens, when
	// they stood above the shed point (NoRoom).
	Again  []Fetch `json:"again,omitempty"`
	Floor  int     `json:"floor,omitempty"`
	NoRoom bool    `json:"noRoom,omitempty"`
}

// Fetch is what one tool result fetched, so that fetching it again can be
// recognised: a read's file and lines, or any other tool's call.
type Fetch struct {
	Tool string `json:"tool"`
	// Path, Start and End are a read's file and lines (End 0: to the end).
	Path  string `json:"path,omitempty"`
	Start int    `json:"start,omitempty"`
	End   int    `json:"end,omitempty"`
	// Call is the arguments of any other call, with sorted keys.
	Call string `json:"call,omitempty"`
	// Label names it for a person.
	Label string `json:"label"`
}

// judge weighs shrink ev, just applied to h (folded is h.Folded before it);
// floor is what no shrink can remove, the fixed prefix and the task.
func (p *Progress) judge(h *History, ev *Event, folded int, b Budget, floor int) {
	var again []Fetch
	results := 0
	for _, it := range h.Items {
		if !it.IsRound() || it.Round <= p.Round || it.Round > ev.Round {
			continue
		}
		for _, r := range it.Results {
			results++
			f, ok := fetchOf(it, r)
			if !ok {
				continue
			}
			for _, g := range p.Removed {
				if f.overlaps(g) {
					again = append(again, f)
					break
				}
			}
		}
	}
	noRoom := floor > b.ShedPoint
	if noRoom || 2*len(again) > results {
		p.Stalled++
		p.Again, p.Floor, p.NoRoom = again, floor, noRoom
	} else {
		p.Stalled = 0
		p.Again, p.Floor, p.NoRoom = nil, 0, false
	}
	p.Removed = removedBy(h, ev, folded)
	p.Round = ev.Round
}

// removedBy is what ev took out of view: the results it shed and those of
// the items it folded that were still shown in full. A result an earlier
// shrink shed was out of view before ev: the model reading it again after
// ev is not fetching back what ev removed.
func removedBy(h *History, ev *Event, folded int) []Fetch {
	var out []Fetch
	for _, c := range ev.Shed {
		if c.Result < 0 || c.Item < 0 || c.Item >= len(h.Items) || c.Result >= len(h.Items[c.Item].Results) {
			continue
		}
		it := h.Items[c.Item]
		if f, ok := fetchOf(it, it.Results[c.Result]); ok {
			out = append(out, f)
		}
	}
	if ev.Fold != nil {
		for i := folded; i < ev.Fold.Upto && i < len(h.Items); i++ {
			it := h.Items[i]
			if contains(ev.Fold.Keep, i) {
				continue // kept in view
			}
			for _, r := range it.Results {
				if r.Shed {
					continue // shed by ev (listed above) or out of view before it
				}
				if f, ok := fetchOf(it, r); ok {
					out = append(out, f)
				}
			}
		}
	}
	return out
}

// fetchOf is what result r of item it fetched; false for a result that
// fetched nothing (an error, an edit or a write).
func fetchOf(it *Item, r *Result) (Fetch, bool) {
	if r.IsError {
		return Fetch{}, false
	}
	switch r.Kind {
	case KindEdit, KindWrite:
		return Fetch{}, false
	case KindRead:
		f := Fetch{Tool: r.Tool, Path: r.Path, Start: r.StartLine, End: r.EndLine, Label: r.Path}
		if r.StartLine > 0 && r.EndLine > 0 {
			f.Label = fmt.Sprintf("%s lines %d-%d", r.Path, r.StartLine, r.EndLine)
		}
		return f, r.Path != ""
	}
	f := Fetch{Tool: r.Tool, Label: strings.TrimSpace(r.Summary)}
	for _, c := range it.Assistant.ToolCalls {
		if c.ID == r.CallID {
			f.Call = normalArgs(c.Arguments)
		}
	}
	if f.Label == "" {
		f.Label = r.Tool + " " + f.Call
	}
	return f, true
}

// normalArgs is a call's JSON arguments with sorted keys and no spaces.
func normalArgs(args string) string {
	var v any
	if json.Unmarshal([]byte(args), &v) != nil {
		return strings.TrimSpace(args)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// overlaps reports whether f fetched again what g fetched: the same call,
// or a read of the same file that shows at least half of the lines g
// showed. A read of a smaller part of a file shed whole is what the
// guard's own advice asks for (read it in ranges), not a fetch again. An
// end of 0 reads to the end of the file: g's lines are then unknown, and
// only another read to the end shows them again.
func (f Fetch) overlaps(g Fetch) bool {
	if f.Tool != g.Tool {
		return false
	}
	if f.Path == "" && g.Path == "" {
		return f.Call == g.Call
	}
	if f.Path != g.Path {
		return false
	}
	const open = int(^uint(0) >> 2)
	fEnd, gEnd := f.End, g.End
	if fEnd <= 0 {
		fEnd = open
	}
	if gEnd <= 0 {
		gEnd = open
	}
	from, to := max(f.Start, g.Start, 1), min(fEnd, gEnd)
	if from > to {
		return false
	}
	if gEnd == open {
		return fEnd == open
	}
	return 2*(to-from+1) >= gEnd-max(g.Start, 1)+1
}

// Explain says why the shrinks made no progress and what to do, naming
// what was fetched again (or what fills the window).
func (p *Progress) Explain(b Budget) string {
	what, reads := labels(p.Again)
	var why string
	switch {
	case len(p.Again) > 0:
		why = fmt.Sprintf("before each of the last %d shrinks the model mostly fetched again what the shrink before had removed (%s)", p.Stalled, what)
	default:
		why = fmt.Sprintf("the fixed prefix and the task take %d tokens, more than the shed point of %d, so each of the last %d shrinks shed what the round before it brought and left no room for the work",
			p.Floor, b.ShedPoint, p.Stalled)
	}
	do := "Ask for smaller pieces (narrower searches, shorter commands)"
	if len(reads) > 0 {
		do = "Ask it to read " + strings.Join(reads, ", ") + " in ranges (start_line, end_line) and keep notes of what it needs"
	}
	return why + ". " + do + ", or give the model a larger window (REIKA_CONTEXT_WINDOW, and the engine's own: llama-server -c, vLLM --max-model-len)."
}

// labels names fetches once each, and the files of the reads among them.
func labels(fs []Fetch) (string, []string) {
	var names, reads []string
	seen := map[string]bool{}
	for _, f := range fs {
		if !seen[f.Label] {
			seen[f.Label] = true
			names = append(names, f.Label)
		}
		if f.Path != "" && !seen["path:"+f.Path] {
			seen["path:"+f.Path] = true
			reads = append(reads, f.Path)
		}
	}
	return strings.Join(names, "; "), reads
}
