package agent

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/reika-lsp/reika-lsp/internal/atomicfile"
)

// Save writes the whole conversation, unshed, as Markdown. It is safe
// during a turn: it writes what the log holds up to the last round.
func (a *Agent) Save(path string) (string, error) {
	a.mu.Lock()
	sess := a.sess
	a.mu.Unlock()
	if sess == nil {
		return "", errors.New("there is no conversation to save yet")
	}
	if path == "" {
		path = strings.TrimSuffix(sess.log.path, ".jsonl") + ".md"
	} else if !filepath.IsAbs(path) {
		path = filepath.Join(a.opts.Workspace.Root(), path)
	}
	size, err := sess.log.synced()
	if err != nil {
		return "", err
	}
	recs, err := readLog(sess.log.path, size)
	if err != nil {
		return "", err
	}
	if err := atomicfile.Write(path, []byte(transcriptMarkdown(recs))); err != nil {
		return "", err
	}
	return path, nil
}

// transcriptMarkdown renders a session log as Markdown: every message
// whole, as it happened, with the notes, sheds and folds marked where they
// occurred. Nothing shed or folded is missing from it.
func transcriptMarkdown(recs []record) string {
	var b strings.Builder
	start := recs[0]
	fmt.Fprintf(&b, "# Reika session %s\n\n", start.Session)
	fmt.Fprintf(&b, "- Workspace: `%s`\n", start.Root)
	if start.Model != "" {
		fmt.Fprintf(&b, "- Model: %s\n", start.Model)
	}
	if start.Window > 0 {
		fmt.Fprintf(&b, "- Window: %d tokens (%s)\n", start.Window, start.Source)
	}
	b.WriteString("\n")
	round := 0
	for _, r := range recs[1:] {
		switch r.Kind {
		case recTurn:
			fmt.Fprintf(&b, "## Turn %d\n\n**User:**\n\n%s\n\n", r.Turn, r.Prompt)
		case recRound:
			if r.Reply == nil {
				continue
			}
			round++
			roundMarkdown(&b, r, round)
		case recNote:
			fmt.Fprintf(&b, "> **Note before the fold:** %s\n\n", strings.ReplaceAll(r.Text, "\n", "\n> "))
		case recEvent:
			if r.Event == nil {
				continue
			}
			if n := countShed(r.Event); n > 0 {
				fmt.Fprintf(&b, "_%s._\n\n", shedLine(r.Event, n))
			}
			if r.Event.Fold != nil {
				fmt.Fprintf(&b, "_%s._\n\n", foldLine(r.Event))
			}
		case recInfo:
			if r.Cut != "" {
				fmt.Fprintf(&b, "**Assistant (cut off):**\n\n%s\n\n", r.Cut)
				continue
			}
			fmt.Fprintf(&b, "_%s_\n\n", r.Text)
		}
	}
	return b.String()
}

// roundMarkdown writes one logged round: its reasoning, its answer, and
// each tool call with its result.
func roundMarkdown(b *strings.Builder, r record, round int) {
	fmt.Fprintf(b, "### Round %d\n\n", round)
	if r.Reply.Reasoning != "" {
		fmt.Fprintf(b, "<details><summary>Reasoning</summary>\n\n%s\n\n</details>\n\n", r.Reply.Reasoning)
	}
	if r.Reply.Content != "" {
		fmt.Fprintf(b, "**Assistant:**\n\n%s\n\n", r.Reply.Content)
	}
	for i, c := range r.Reply.ToolCalls {
		fmt.Fprintf(b, "**Tool call** `%s`\n\n%s\n", c.Name, fence(c.Arguments, "json"))
		if i < len(r.Results) {
			res := r.Results[i]
			title := res.Summary
			if title == "" {
				title = res.Tool
			}
			if res.IsError {
				title += " (error)"
			}
			fmt.Fprintf(b, "**Result** — %s\n\n%s\n", title, fence(res.Text, ""))
		}
	}
}

// fence wraps text in a code fence longer than any backtick run inside it.
func fence(text, lang string) string {
	n := 3
	run := 0
	for _, c := range text {
		if c == '`' {
			run++
			n = max(n, run+1)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", n)
	return f + lang + "\n" + strings.TrimRight(text, "\n") + "\n" + f + "\n"
}
