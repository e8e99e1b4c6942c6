package agent

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// The transcript on request: an editor that starts again (a window reload
// restarts the server) asks for the session's transcript to show what it
// showed before. It is rebuilt from the session log, the same events, in
// the same order and with the same texts as the reika/transcript
// notifications of the turns that wrote it (only what was never logged is
// missing: the streamed chunks, which the full messages replace; a reply a
// cancel cut off is logged whole with the cancel).

// Bounds of a transcript page, in characters of event text and arguments.
const (
	DefaultTranscriptChars = 1 << 20
	MaxTranscriptChars     = 8 << 20
)

// TranscriptPage is the result of reika.transcript: the newest events of
// the session that fit the limit, oldest first.
type TranscriptPage struct {
	// Session is the session the events belong to; "" when there is none.
	Session string `json:"session"`
	// Events are the transcript events, as reika/transcript sends them.
	Events []Event `json:"events"`
	// Omitted counts the older events left out to stay within the limit.
	Omitted int `json:"omitted"`
}

// Transcript rebuilds the transcript of the current session from its log:
// the newest events whose texts and arguments add up to at most maxChars
// (≤ 0: DefaultTranscriptChars; at most MaxTranscriptChars). Before the
// first turn of a server that resumes, it is the session the first turn
// will resume. It reads what the log holds on disk, so the round a running
// turn has not synced yet is left out (its events were sent live).
func (a *Agent) Transcript(maxChars int) (TranscriptPage, error) {
	path, size, err := a.transcriptLog()
	if err != nil {
		return TranscriptPage{Events: []Event{}}, err
	}
	if path == "" {
		return TranscriptPage{Events: []Event{}}, nil
	}
	return transcriptPage(path, size, maxChars)
}

// transcriptPage is the transcript of the log at path, read up to size
// bytes (-1: whole), within maxChars as Transcript says.
func transcriptPage(path string, size int64, maxChars int) (TranscriptPage, error) {
	if maxChars <= 0 {
		maxChars = DefaultTranscriptChars
	}
	maxChars = min(maxChars, MaxTranscriptChars)
	recs, err := readLog(path, size)
	if err != nil {
		return TranscriptPage{Events: []Event{}}, err
	}
	events := transcriptEvents(recs)
	page := TranscriptPage{Session: recs[0].Session}
	page.Events, page.Omitted = newestWithin(events, maxChars)
	return page, nil
}

// transcriptLog is the log of the current session and the size of it the
// session has synced (what a running turn appends after that is left out),
// else (when the agent resumes) the workspace's last log, whole (size -1);
// "" when there is neither.
func (a *Agent) transcriptLog() (path string, size int64, err error) {
	a.mu.Lock()
	sess := a.sess
	a.mu.Unlock()
	if sess != nil {
		size, err := sess.log.synced()
		return sess.log.path, size, err
	}
	if !a.opts.Resume {
		return "", 0, nil
	}
	dir := a.sessionsDir()
	id, err := os.ReadFile(filepath.Join(dir, "last"))
	if err != nil {
		return "", 0, nil
	}
	return filepath.Join(dir, strings.TrimSpace(string(id))+".jsonl"), -1, nil
}

// transcriptEvents turns a session log into the events its turns emitted.
func transcriptEvents(recs []record) []Event {
	session := recs[0].Session
	// A round's results were priced with what the estimator knew once the
	// round was in: the state record that follows the round.
	after := estimatorsAfter(recs)
	var out []Event
	turn, round := 0, 0
	emit := func(ev Event) {
		ev.Session, ev.Turn = session, turn
		if ev.Round == 0 {
			ev.Round = round
		}
		out = append(out, ev)
	}
	// A round's results follow its note and go with its shrink, cut again
	// as the shrink cut them (Event.Recut), as the turn loop emits them.
	var pending *record
	var pendingEst *ctxwin.Estimator
	flush := func(ev *ctxwin.Event) {
		if pending != nil {
			resultEvents(*pending, ev, pendingEst, emit)
			pending = nil
		}
	}
	for i, r := range recs[1:] {
		switch r.Kind {
		case recNote:
		case recEvent:
			flush(r.Event)
		default:
			flush(nil)
		}
		switch r.Kind {
		case recTurn:
			turn = r.Turn
			emit(Event{Kind: EventUser, Round: round + 1, Text: r.Prompt})
		case recRound:
			if r.Reply == nil {
				continue
			}
			round++
			est := after[i+1]
			if est == nil {
				est = &ctxwin.Estimator{}
			}
			roundEvents(r, emit)
			pending, pendingEst = &recs[i+1], est
		case recNote:
			emit(Event{Kind: EventNote, Text: r.Text})
		case recEvent:
			if r.Event != nil {
				shrinkEvents(r.Event, emit)
			}
		case recInfo:
			if r.Cut != "" {
				emit(Event{Kind: EventAssistant, Round: round + 1, Text: r.Cut})
				continue
			}
			emit(infoEvent(r.Text))
		}
	}
	flush(nil)
	return out
}

// estimatorsAfter gives, for each record of a log, the estimator of the
// first state record at or after it (nil when none follows).
func estimatorsAfter(recs []record) []*ctxwin.Estimator {
	after := make([]*ctxwin.Estimator, len(recs))
	var next *ctxwin.Estimator
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Kind == recState && recs[i].Estimator != nil {
			next = recs[i].Estimator
		}
		after[i] = next
	}
	return after
}

// infoEvent is the event of a logged info line: an error when the line
// says "error: ".
func infoEvent(text string) Event {
	if msg, ok := strings.CutPrefix(text, "error: "); ok {
		return Event{Kind: EventError, Text: msg}
	}
	return Event{Kind: EventInfo, Text: text}
}

// shrinkEvents emits the shed and fold events of one logged shrink.
func shrinkEvents(ev *ctxwin.Event, emit func(Event)) {
	if n := countShed(ev); n > 0 {
		emit(Event{Kind: EventShed, Round: ev.Round, Text: shedLine(ev, n)})
	}
	if ev.Fold != nil {
		emit(Event{Kind: EventFold, Round: ev.Round, Text: foldLine(ev), Tokens: ev.Fold.RecapTokens})
	}
}

// roundEvents emits one logged round as the turn loop did: the reasoning,
// the answer, the tool calls (resultEvents their results).
func roundEvents(r record, emit func(Event)) {
	reply := r.Reply
	if reply.Reasoning != "" {
		emit(Event{Kind: EventReasoning, Text: reply.Reasoning})
	}
	if reply.Content != "" || len(reply.ToolCalls) == 0 {
		emit(Event{Kind: EventAssistant, Text: reply.Content})
	}
	for _, c := range reply.ToolCalls {
		emit(Event{Kind: EventToolCall, Tool: c.Name, Args: jsonArgs(c.Arguments), Text: c.Name})
	}
}

// resultEvents emits a logged round's results as the model saw them: as
// logged, or as the shrink of the same request (ev, nil when none) cut
// them again.
func resultEvents(r record, ev *ctxwin.Event, est *ctxwin.Estimator, emit func(Event)) {
	views := map[int]string{}
	if ev != nil {
		for _, c := range ev.Recut {
			views[c.Result] = c.View
		}
	}
	for j, res := range r.Results {
		shown := res.Shown()
		if v, ok := views[j]; ok && !res.Shed {
			shown = v
			if v == "" {
				shown = res.Text
			}
		}
		emit(Event{Kind: EventToolResult, Tool: res.Tool, Text: shown, Tokens: est.Tokens(len(shown), true)})
	}
}

// newestWithin keeps the newest events whose sizes add up to at most max,
// and says how many older ones it left out.
func newestWithin(events []Event, max int) ([]Event, int) {
	total := 0
	keep := len(events)
	for keep > 0 {
		size := len(events[keep-1].Text) + len(events[keep-1].Args)
		if total+size > max {
			break
		}
		total += size
		keep--
	}
	kept := append([]Event{}, events[keep:]...)
	return kept, keep
}
