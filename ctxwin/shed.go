package ctxwin

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Shed sizes.
const (
	// TinyResult is the size below which a result keeps its bytes when
	// shed: re-running it would cost more than holding it.
	TinyResult = 256
	// LargePayload separates the large payloads, shed first, from the small.
	LargePayload = 2048
	// bigArgument is the size above which a tool call's string argument
	// (the content of a write, the strings of an edit) is shed.
	bigArgument = 512
	// openingChars is what a shed subagent report keeps of its opening.
	openingChars = 400
)

// ShedMark follows the summary line of a shed result.
const ShedMark = " [shed]"

// Outliner returns the outline of the file a read result read, within
// budget characters, or "" when it has none. ctxwin stays free of
// tree-sitter: the agent injects package outline here.
type Outliner func(r *Result, budget int) string

// ShedView is what a shed result collapses to: its summary line, marked as
// shed, plus what its shape keeps — a read its outline, a diff its file and
// hunk headers, a subagent report its opening, a long output where it was
// saved. It returns "" when the result is too small to be worth shedding.
func ShedView(r *Result, outline Outliner, outlineBudget int) string {
	shown := r.Shown()
	if len(r.Text) <= TinyResult {
		return ""
	}
	head := r.Summary
	if head == "" {
		head = firstLine(r.Text, 120)
	}
	var b strings.Builder
	b.WriteString(head)
	b.WriteString(ShedMark)
	switch r.Kind {
	case KindRead:
		if outline != nil {
			if o := strings.TrimRight(outline(r, outlineBudget), "\n"); o != "" {
				b.WriteString("\n")
				b.WriteString(o)
			}
		}
	case KindEdit:
		if h := diffHeaders(r.Text, outlineBudget); h != "" {
			b.WriteString("\n")
			b.WriteString(h)
		}
	case KindSubagent:
		b.WriteString("\n")
		b.WriteString(opening(r.Text, openingChars))
	}
	if r.SavedTo != "" {
		fmt.Fprintf(&b, "\nwhole output: %s", r.SavedTo)
	}
	v := b.String()
	// A shed that saves less than half is not worth a rewrite.
	if len(v)*2 > len(shown) {
		return ""
	}
	return v
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

// firstLine is the first line of s, at most n bytes.
func firstLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > n {
		s = s[:validCut(s, n)] + "…"
	}
	return s
}

// shedArguments returns the calls with long string arguments replaced by a
// note of their size, or nil when no argument is long. Arguments that are
// not a JSON object are replaced whole when long.
func shedArguments(calls []ToolCall) []ToolCall {
	var out []ToolCall
	for i, c := range calls {
		args, changed := shedArgs(c.Arguments)
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

func shedArgs(args string) (string, bool) {
	if len(args) <= bigArgument {
		return args, false
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(args), &obj); err != nil {
		b, _ := json.Marshal(map[string]string{"shed": fmt.Sprintf("%d bytes of arguments", len(args))})
		return string(b), true
	}
	changed := false
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if s, ok := obj[k].(string); ok && len(s) > bigArgument {
			obj[k] = fmt.Sprintf("[shed: %d bytes, %d lines]", len(s), strings.Count(s, "\n")+1)
			changed = true
		}
	}
	if !changed {
		return args, false
	}
	b, err := json.Marshal(obj) // map keys marshal sorted: deterministic
	if err != nil {
		return args, false
	}
	return string(b), true
}
