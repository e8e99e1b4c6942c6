package ctxwin

import (
	"fmt"
	"strings"
)

// Shed down to the target (docs/design.md §3.7), the second step of a shrink:
// over the shed point, the units of sheddable go oldest first, large
// payloads before small ones, until the request is at the shed target; a
// shed round's reasoning goes with it. Each step is priced as the request
// will be: the result shrinks to its first line, the event's message grows
// by the entry naming it.
//
// What a shed result keeps: its first line, in place (a read's header,
// "src/a.go lines 1-244 of 244", a grep's first match), and an entry in the
// event's message with what its shape keeps (shedEntry). A very small
// result keeps its bytes: re-running it would cost more than holding it.

// Shed sizes.
const (
	// TinyResult is the size below which a result keeps its bytes when
	// shed: re-running it would cost more than holding it.
	TinyResult = 256
	// LargePayload separates the large payloads, shed first, from the small.
	LargePayload = 2048
	// bigArgument is the size above which a tool call's string argument
	// (the content of a write, the strings of an edit) is cut short.
	bigArgument = 512
	// openingChars is what a shed subagent report keeps of its opening.
	openingChars = 400
)

// Outliner returns the outline of the file a read result read, within
// budget characters, or "" when it has none. ctxwin stays free of
// tree-sitter: the agent injects package outline here.
type Outliner func(r *Result, budget int) string

// shedTo sheds units in the seed's order until the draft is at target.
func (d *draft) shedTo(units []unit, target int) {
	for _, large := range []bool{true, false} {
		for _, u := range units {
			if d.total <= target {
				return
			}
			if (u.size >= LargePayload) != large {
				continue
			}
			d.shed(u)
			if it := d.m.H.Items[u.item]; u.result >= 0 && it.Assistant.Reasoning != "" {
				d.shed(unit{item: u.item, result: ShedReasoning}) // a shed round's reasoning goes with it
			}
		}
	}
}

// shed adds one unit to the draft and prices it.
func (d *draft) shed(u unit) {
	it := d.m.H.Items[u.item]
	switch u.result {
	case ShedReasoning, ShedArguments:
		s := d.state(u.item)
		if u.result == ShedReasoning {
			if s.reasoningShed {
				return
			}
			s.reasoningShed = true
			d.ev.Shed = append(d.ev.Shed, ShedChange{Item: u.item, Result: ShedReasoning})
		} else {
			s.calls = u.calls
			d.ev.Shed = append(d.ev.Shed, ShedChange{Item: u.item, Result: ShedArguments, Calls: u.calls})
		}
		old := d.assistant(u.item)
		now := d.assistantNow(u.item)
		d.costs[u.item] += now - old
		d.total += now - old
	default:
		r := it.Results[u.result]
		e := &d.m.est
		old := e.MessageTokens(r.message())
		now := e.Tokens(len(RoleTool)+len(r.CallID)+len(u.head), false) + e.overhead()
		d.costs[u.item] += now - old
		d.total += now - old
		d.ev.Shed = append(d.ev.Shed, ShedChange{Item: u.item, Result: u.result, View: u.head, Entry: u.entry})
		d.shedNow[[2]int{u.item, u.result}] = true
		d.addEntry(u.item, u.result, u.entry)
	}
}

// dropRounds takes out of view whole the rounds all of whose results are
// shed, their reasoning and reply with them (event.go): rounds shed side by
// side then make one deletion, with no short run kept between them.
func (d *draft) dropRounds() {
	h := d.m.H
	for i := 0; i < len(h.Items)-1; i++ {
		it := h.Items[i]
		if !h.InView(i) || !it.IsRound() || len(it.Results) == 0 || it.Pinned > 0 {
			continue
		}
		all := true
		for j, r := range it.Results {
			if !r.Shed && !d.shedNow[[2]int{i, j}] {
				all = false
				break
			}
		}
		if !all {
			continue
		}
		d.dropped[i] = true
		delete(d.assistants, i)
		kept := d.ev.Shed[:0]
		for _, c := range d.ev.Shed {
			if c.Item != i || c.Result >= 0 {
				kept = append(kept, c) // the round's own changes are moot
			}
		}
		d.ev.Shed = append(kept, ShedChange{Item: i, Result: ShedRound})
		left := d.m.asideTokens(i)
		d.total += left - d.costs[i]
		d.costs[i] = left
	}
}

// shedEntry is what shedding r of round keeps: the first line it keeps in
// place and its entry in the event's message (its round, that line, and
// what its shape keeps: a read's outline, a diff's file and hunk headers, a
// report's opening, where a long output was saved). ok is false when r is
// too small for a shed to be worth it.
func shedEntry(round int, r *Result, outline Outliner, outlineBudget int) (head, entry string, ok bool) {
	shown := r.Shown()
	if len(r.Text) <= TinyResult {
		return "", "", false
	}
	line := firstLine(shown)
	head = line + "\n"
	var b strings.Builder
	fmt.Fprintf(&b, "- round %d: `%s`", round, line)
	// The summary (a command, a search) goes along unless the line says as
	// much: a line that is only a part of it ("1", the first line of wc -l)
	// does not.
	if s := strings.TrimSpace(r.Summary); s != "" && (!strings.Contains(s, line) || 2*len(line) < len(s)) {
		b.WriteString(" (" + s + ")")
	}
	var more string
	switch {
	case r.Kind == KindRead:
		if outline != nil {
			if o := strings.TrimRight(outline(r, outlineBudget), "\n"); o != "" {
				more = "outline:\n" + o
			}
		}
	case r.Kind == KindEdit || isDiff(r.Text): // an edit's, or one a command printed (git diff)
		more = diffHeaders(r.Text, outlineBudget)
	case r.Kind == KindSubagent:
		more = opening(r.Text, openingChars)
	case r.Kind == KindBash:
		if last := lastOutputLine(r.Text); last != "" && last != line {
			more = "last line: `" + last + "`"
		}
	}
	if r.SavedTo != "" {
		more = strings.TrimLeft(more+"\nwhole output: "+r.SavedTo, "\n")
	}
	if more != "" {
		b.WriteString("\n  " + strings.ReplaceAll(more, "\n", "\n  "))
	}
	entry = b.String()
	// A shed that does not halve what the result shows is not worth it.
	if (len(head)+len(entry))*2 > len(shown) {
		return "", "", false
	}
	return head, entry, true
}

// firstLine is the first line of s without its newline. A shed result
// keeps it with its newline: a prefix of its text that ends at a line
// break, where tokenizers split, so the engine sees the rest of the result
// deleted and what follows it (the message's end, which follows the text's
// last line break as it did) the same as before.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// isDiff reports whether text holds a unified diff: a file header and a
// hunk header.
func isDiff(text string) bool {
	file := strings.HasPrefix(text, "diff ") || strings.HasPrefix(text, "--- ") ||
		strings.Contains(text, "\ndiff ") || strings.Contains(text, "\n--- ")
	return file && (strings.HasPrefix(text, "@@ ") || strings.Contains(text, "\n@@ "))
}

// lastOutputLine is the last line of a command's output, without the lines
// the bash tool adds after it ("(exit status 0)"), cut to 200 bytes.
func lastOutputLine(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for len(lines) > 1 && strings.HasPrefix(lines[len(lines)-1], "(") && strings.HasSuffix(lines[len(lines)-1], ")") {
		lines = lines[:len(lines)-1]
	}
	if len(lines) < 2 {
		return ""
	}
	last := strings.TrimSpace(lines[len(lines)-1])
	if len(last) > 200 {
		last = last[:validCut(last, 200)] + "…"
	}
	return last
}

// diffHeaders keeps the file and hunk headers of a unified diff.
func diffHeaders(diff string, budget int) string {
	var b strings.Builder
	for _, line := range strings.Split(diff, "\n") {
		if strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "+++ ") ||
			strings.HasPrefix(line, "@@") || strings.HasPrefix(line, "diff ") {
			if b.Len()+len(line)+1 > budget {
				b.WriteString("…")
				break
			}
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(line)
		}
	}
	return b.String()
}

// opening is the start of s, cut at a line end when one is near.
func opening(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := validCut(s, n)
	if i := strings.LastIndexByte(s[:cut], '\n'); i > n/2 {
		cut = i
	}
	return s[:cut] + "…"
}

// Kept of a long string argument cut short.
const (
	argumentHead = 160
	argumentTail = 80
)

// cutArguments returns the calls with each long string argument cut short
// inside the string, or nil when none is long. The cut is a deletion: the
// argument keeps its start and its end, cut before a space where one is
// near, and the JSON stays valid (an escape is never split).
func cutArguments(calls []ToolCall) []ToolCall {
	var out []ToolCall
	for i, c := range calls {
		args, changed := cutArgs(c.Arguments)
		if !changed {
			continue
		}
		if out == nil {
			out = append([]ToolCall(nil), calls...)
		}
		out[i].Arguments = args
	}
	return out
}

// cutArgs cuts the long strings of a call's JSON arguments (cutArguments).
func cutArgs(args string) (string, bool) {
	if len(args) <= bigArgument {
		return args, false
	}
	var b strings.Builder
	changed := false
	last := 0
	for i := 0; i < len(args); i++ {
		if args[i] != '"' {
			continue
		}
		end := stringEnd(args, i)
		if end < 0 {
			return args, false // not JSON: left as it is
		}
		if end-i-1 > bigArgument {
			from, to := cutSpan(args, i+1, end)
			b.WriteString(args[last:from])
			last = to
			changed = true
		}
		i = end
	}
	if !changed {
		return args, false
	}
	b.WriteString(args[last:])
	return b.String(), true
}

// stringEnd is the index of the quote that closes the JSON string opened
// at i, or -1.
func stringEnd(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return -1
}

// cutSpan is the span of the string body s[start:end] to delete: all but
// about argumentHead bytes at its start and argumentTail at its end, each
// cut before a space when one is near, never inside an escape.
func cutSpan(s string, start, end int) (from, to int) {
	from = escapeSafe(s, start, start+argumentHead)
	if i := strings.LastIndexByte(s[start:from], ' '); i > argumentHead/2 {
		from = start + i
	}
	to = escapeSafe(s, start, end-argumentTail)
	if i := strings.IndexByte(s[to:end], ' '); i >= 0 && i < argumentTail/2 {
		to += i
	}
	return from, max(to, from)
}

// escapeSafe moves i, inside the string body that starts at start, to a
// position that is not inside an escape sequence.
func escapeSafe(s string, start, i int) int {
	for j := start; j < len(s); j++ {
		if j >= i {
			return j
		}
		if s[j] == '\\' {
			j++
			if j < len(s) && s[j] == 'u' {
				j += 4
			}
		}
	}
	return len(s)
}
