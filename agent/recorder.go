package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// A session records what happens to it: to its log, and to the editor's
// transcript through its sink. A turn's run and a compact on demand both
// record through the session, so neither builds the other to do it.

// sink is where a session's events go: the editor's transcript and its
// notices. *Agent is one.
type sink interface {
	transcript(ev Event)
	notice(key, level, text string)
}

// note is the note round: what the model has established, asked with
// tool calls forbidden and the same tools, logged and shown; "" when it
// failed (logged with logf) or said nothing.
func (s *session) note(ctx context.Context, model llm.Model, logf func(string, ...any)) string {
	m := s.m
	nr := m.NoteRound()
	req := &llm.Request{Messages: nr.Messages, Tools: m.H.Tools, ToolChoice: "none", MaxTokens: nr.MaxTokens, Subagent: s.subagent}
	m.Sent()
	resp, err := model.Complete(ctx, req, nil)
	if err != nil {
		logf("reika: the note round failed, folding without a note: %v", err)
		return ""
	}
	if s.tally != nil {
		s.tally.Add(resp)
	}
	note := strings.TrimSpace(resp.Message.Content)
	if note == "" {
		return ""
	}
	s.log.append(record{Kind: recNote, Text: note})
	s.emit(Event{Kind: EventNote, Round: m.H.Rounds(), Text: note})
	return note
}

// record logs a shrink and reports it: the shed line, or the fold line
// with the recap size.
func (s *session) record(ev *ctxwin.Event) {
	s.log.append(record{Kind: recEvent, Event: ev})
	if ev.Reason != ctxwin.ReasonNoWindow {
		s.shrunkAt = ev.Round
	}
	if n := countShed(ev); n > 0 {
		s.emit(Event{Kind: EventShed, Round: ev.Round, Text: shedLine(ev, n)})
	}
	if ev.Fold != nil {
		line := foldLine(ev)
		s.emit(Event{Kind: EventFold, Round: ev.Round, Text: line, Tokens: ev.Fold.RecapTokens})
		if !s.subagent {
			s.out.notice("", LevelInfo, line)
		}
	}
}

// emit sends a transcript event of the session's current turn; a
// subagent's session emits nothing.
func (s *session) emit(ev Event) {
	if s.subagent {
		return
	}
	ev.Session, ev.Turn = s.id, s.m.H.Turns()
	if ev.Round == 0 {
		ev.Round = s.m.H.Rounds()
	}
	s.out.transcript(ev)
}

func countShed(ev *ctxwin.Event) int {
	n := 0
	for _, c := range ev.Shed {
		if c.Result >= 0 {
			n++
		}
	}
	return n
}

func shedLine(ev *ctxwin.Event, n int) string {
	what := "results"
	if n == 1 {
		what = "result"
	}
	if ev.Reason == ctxwin.ReasonNoWindow {
		return fmt.Sprintf("Collapsed %d older %s to summaries (no known window)", n, what)
	}
	return fmt.Sprintf("Shed %d old %s to summaries (%s → %s tokens, %s)", n, what,
		ctxwin.FormatTokens(ev.Before), ctxwin.FormatTokens(ev.After), ev.Reason)
}

func foldLine(ev *ctxwin.Event) string {
	rounds := "rounds"
	if ev.Fold.Rounds == 1 {
		rounds = "round"
	}
	return fmt.Sprintf("Folded %d %s into a %s-token recap", ev.Fold.Rounds, rounds, ctxwin.FormatTokens(ev.Fold.RecapTokens))
}
