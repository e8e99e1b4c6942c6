package ctxwin

import "strings"

// What a shrink event does to the request (docs/design.md §3.7–3.8, issue 14).
//
// An event is cache-shaped: relative to the request before it, it deletes
// spans and appends one message after the kept rounds, after the newest
// item, that carries what the event adds. llama.cpp's chunk reuse then
// serves everything the event kept, shifted into place, and processes only
// the appended message; an engine that reuses only a common prefix
// processes everything after the first deletion, as it did when events
// rewrote in place. What the model sees:
//
//   - A round whose results are all shed leaves the view whole, its call,
//     reasoning and reply with them; rounds shed side by side make one
//     deletion. A shed result of a round that keeps others keeps its first
//     line where it was, a prefix of its own text ("src/a.go lines 1-244 of
//     244" for a read), so keeping it is a pure deletion. Nothing is
//     inserted in place: one inserted token would stop the chunk reuse
//     there. Shed reasoning is deleted; a long string argument of a shed
//     call is cut short inside the string, the JSON kept valid.
//   - What stays between two deletions must be long enough for the engine
//     to reuse (minRun tokens: llama.cpp reuses kept text only in chunks of
//     n_cache_reuse tokens, and a shorter run stops the reuse for all that
//     follows), so a shed of rounds one by one, keeping the call and the
//     first line of each, would save nothing on the engine: measured on
//     llama-server 0.7.0 with --cache-reuse 64, consecutive shed rounds
//     kept that way stopped the reuse at the first of them. A deletion
//     that would leave a shorter run is given up (runs.go): a reply whose
//     reasoning the shed step cut right after a deletion, by the shed or
//     by the fold (the recap before, absorbed, can sit among the rounds a
//     fold keeps), would leave only its role header between the two; it
//     stays whole, and the reasoning of replies further on, after runs
//     long enough, is shed instead to take back the room.
//   - A fold deletes the folded rounds, but never the prompt of the turn
//     in progress nor a round holding a result that defines its task: they
//     stay where they are (Item.Pinned), and the recap refers to them.
//   - The appended message (Aside) opens with the event's tag, a letter
//     that the last 51 events' messages do not start with, and ContextMark
//     ("K [context] To fit the context window, ..."), and holds, in
//     order: the recap of a fold; the results shed, each named by the first
//     line it kept and its round, with the summary its shape keeps (a
//     read's outline, of the declarations the lines it read show when it
//     read part of the file, the Outliner's choice; a diff's hunk
//     headers, a report's opening, where a long output was saved; an
//     outline whose declarations stay in view in a read the event keeps or
//     in another entry is not listed again, the entry naming where it is:
//     entries.go); and the
//     notice that results were shed and can be run again. A fold's
//     message follows the note round's prompt and the note, which stay as
//     they were sent: the slot holds them already, and the recap is led by
//     the note above it.
//   - A fold deletes the rounds it folds with the messages that events
//     appended among them, and the message of the fold before it, whose
//     recap the new one absorbs: recaps replace each other. The messages of
//     sheds among the rounds it keeps stay where they are, naming results
//     still in view; so does every message of a shed that does not fold.
//     What an event appends is all the engine processes.
//   - A fold keeps in view the opening line of the newest event message
//     among what its first deletion takes out, where it was (a prefix of
//     that message, so a deletion too), and the openings kept before that
//     nothing around is deleted. Its first deletion then starts at the
//     opening's tag, where llama-server's earlier prompts, which it keeps
//     in host memory, hold another tag or a round: none shares more with
//     the request than the slot does, so the server keeps the slot and its
//     chunks are reused instead of an older prompt's being restored
//     (foldMarks, fold.go).
//
// Apply replays an event, so a persisted event log restores the history as
// the model last saw it.

// ContextMark follows the tag that opens the message an event appends
// (contextMark).
const ContextMark = "[context]"

// eventTags are the tags of events' messages, in turn.
const eventTags = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// contextMark is the opening of the message of event n (from 1): its tag,
// a letter no event of the last 51 has, then ContextMark. The first
// character of two events' messages then differs, so two of them share
// their role's header and nothing more (see FoldChange.Marks).
func contextMark(n int) string {
	return string(eventTags[(n-1+len(eventTags))%len(eventTags)]) + " " + ContextMark
}

// hasContextMark reports whether s opens as an event's message.
func hasContextMark(s string) bool {
	return strings.HasPrefix(s, ContextMark) || len(s) > 2 && s[1] == ' ' && strings.HasPrefix(s[2:], ContextMark)
}

// ShedNotice ends the message of an event that shed results.
const ShedNotice = "Their full content is gone from view; run the tool again if you need one in full."

// Aside is what an event appended after an item: the note round's reply
// (after its prompt, NotePrompt), when the note stays as it was sent, and
// the event's message.
type Aside struct {
	Note    string `json:"note,omitempty"`
	Message string `json:"message"`
	// Recap says the message carries a fold's recap.
	Recap bool `json:"recap,omitempty"`
	// Head says a fold took the item out of view but kept the message's
	// first line, its tagged opening, where it was (FoldChange.Marks).
	Head bool `json:"head,omitempty"`
}

func (a *Aside) messages(dst []Message) []Message {
	if a.Head {
		return append(dst, Message{Role: RoleUser, Content: firstLine(a.Message)})
	}
	if a.Note != "" {
		dst = append(dst, Message{Role: RoleUser, Content: NotePrompt}, Message{Role: RoleAssistant, Content: a.Note})
	}
	return append(dst, Message{Role: RoleUser, Content: a.Message})
}

// IsAside reports whether m is a message an event appended: the note
// round's prompt or the event's message. (The note itself is the
// assistant message after the prompt.)
func IsAside(m Message) bool {
	return m.Role == RoleUser && (m.Content == NotePrompt || hasContextMark(m.Content))
}

// Event is one shrink: what was shed, what folded, and the message
// appended. Apply replays it.
type Event struct {
	Reason string       `json:"reason"`
	Round  int          `json:"round"`
	Shed   []ShedChange `json:"shed,omitempty"`
	Fold   *FoldChange  `json:"fold,omitempty"`
	// At is the item the message is appended after (the newest), Message
	// the message and Note the note that stays before it. Notice is the
	// shed notice of events logged before events appended a message.
	At      int    `json:"at,omitempty"`
	Message string `json:"message,omitempty"`
	Note    string `json:"note,omitempty"`
	Notice  string `json:"notice,omitempty"`
	// Before and After are the estimated request sizes in tokens, After as
	// the event's own changes leave it, before the newest round's results
	// take the room it made (Recut).
	Before int `json:"before"`
	After  int `json:"after"`
	// Recut is the newest round's results cut again to the room the event
	// left (recut): each is the result's new view, "" when it is now whole.
	Recut []ShedChange `json:"recut,omitempty"`
}

// What a ShedChange changes besides a result.
const (
	ShedReasoning = -1
	ShedArguments = -2
	// ShedRound takes a round out of view whole: all its results are shed.
	ShedRound = -3
)

// ShedChange is one shed: a result collapsed to View (its first line; in
// events logged before events appended a message, its summary), with
// Entry, what the event's message says of it; a round's reasoning dropped;
// or its long tool-call arguments cut to Calls.
type ShedChange struct {
	Item   int        `json:"item"`
	Result int        `json:"result"`
	View   string     `json:"view,omitempty"`
	Entry  string     `json:"entry,omitempty"`
	Calls  []ToolCall `json:"calls,omitempty"`
}

// FoldChange is a fold: the items before Upto leave the view, but those in
// Keep, and the recap replaces the one before.
type FoldChange struct {
	Upto        int    `json:"upto"`
	Keep        []int  `json:"keep,omitempty"`
	Rounds      int    `json:"rounds"`
	Recap       *Recap `json:"recap"`
	RecapTokens int    `json:"recapTokens"`
	// Marks are 1 + each folded item whose message keeps its first line,
	// its opening, in view where it was (Aside.Head; foldMarks says why).
	Marks []int `json:"marks,omitempty"`
}

// Apply makes an event's changes to the history.
func (m *Manager) Apply(ev *Event) {
	m.plans++
	h := m.H
	for _, c := range ev.Shed {
		applyShed(h, c)
	}
	for _, c := range ev.Recut {
		applyRecut(h, c)
	}
	if f := ev.Fold; f != nil {
		for i := range min(f.Upto, len(h.Items)) {
			h.Items[i].Pinned = 0
		}
		for _, k := range f.Keep {
			if k >= 0 && k < len(h.Items) {
				h.Items[k].Pinned = h.Turns()
			}
		}
		h.Folded = f.Upto
		h.Recap = f.Recap
		h.RecapFirst = ev.Message == "" // a fold logged before folds appended their message
		for i, it := range h.Items {
			switch {
			case contains(f.Marks, i+1) && it.After != nil:
				it.After.Head = true
			case it.After != nil && it.After.Recap || h.RecapFirst:
				it.After = nil // the recap before, absorbed
			case it.After != nil:
				it.After.Head = false
			}
			it.Notice = ""
		}
	}
	switch {
	case ev.Message != "" && ev.At >= 0 && ev.At < len(h.Items):
		h.Items[ev.At].After = &Aside{Note: ev.Note, Message: ev.Message, Recap: ev.Fold != nil}
		h.Events++
	case ev.Notice != "":
		if last := h.Last(); last != nil {
			last.Notice = ev.Notice
		}
	}
	h.invalidate()
}

// applyRecut gives a result of the newest round the view a recut gave it.
func applyRecut(h *History, c ShedChange) {
	if c.Item < 0 || c.Item >= len(h.Items) || c.Result < 0 || c.Result >= len(h.Items[c.Item].Results) {
		return
	}
	r := h.Items[c.Item].Results[c.Result]
	r.Cut, r.View = c.View != "", c.View
}

func applyShed(h *History, c ShedChange) {
	if c.Item < 0 || c.Item >= len(h.Items) {
		return
	}
	it := h.Items[c.Item]
	switch {
	case c.Result == ShedReasoning:
		it.ReasoningShed = true
	case c.Result == ShedArguments:
		it.Calls = c.Calls
	case c.Result == ShedRound:
		it.Dropped = true
	case c.Result >= 0 && c.Result < len(it.Results):
		r := it.Results[c.Result]
		r.Shed, r.Cut, r.View, r.Entry = true, false, c.View, c.Entry
		r.Source = nil
	}
}
