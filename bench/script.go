package main

import (
	"fmt"
	"strings"
	"sync"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// Request kinds, as the figures count them.
const (
	kindMain    = "main"    // a round of the session
	kindNote    = "note"    // reika's note round before a fold
	kindSummary = "summary" // a peer's summary call
)

// annotation is what the bench knows of one request the engine saw.
type annotation struct {
	Kind  string
	Round int  // the session round a main request serves
	Lost  bool // the script could not tell the position
}

// annotations are kept by the engine's script, one per request index.
type annotations struct {
	mu sync.Mutex
	by map[int]annotation
}

func newAnnotations() *annotations { return &annotations{by: map[int]annotation{}} }

func (a *annotations) set(i int, an annotation) {
	a.mu.Lock()
	a.by[i] = an
	a.mu.Unlock()
}

func (a *annotations) get(i int) (annotation, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	an, ok := a.by[i]
	return an, ok
}

// reply is the model's reply at step of turn.
func (s *Session) reply(turn, step int) enginetest.Reply {
	st := s.Turns[turn].Steps[step]
	r := enginetest.Reply{Content: st.Content, Reasoning: st.Reasoning}
	for _, c := range st.Calls {
		r.ToolCalls = append(r.ToolCalls, ctxwin.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Args})
	}
	return r
}

// message is the reply at step of turn as the history holds it.
func (s *Session) message(turn, step int) ctxwin.Message {
	r := s.reply(turn, step)
	return ctxwin.Message{Role: ctxwin.RoleAssistant, Content: r.Content, Reasoning: r.Reasoning, ToolCalls: r.ToolCalls}
}

// positionOf reads the session position a request asks for: the step
// after the newest tool result of the session's calls, or the first step
// of a turn whose prompt is the newest such message. Notices, recaps and
// summaries in between are skipped, so it holds whatever a policy made of
// the history.
func (s *Session) positionOf(msgs []ctxwin.Message) (turn, step int, ok bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		switch m.Role {
		case ctxwin.RoleTool:
			t, st, ok := parseCallID(m.ToolCallID)
			if !ok || t >= len(s.Turns) || st+1 >= len(s.Turns[t].Steps) {
				return 0, 0, false
			}
			return t, st + 1, true
		case ctxwin.RoleUser:
			for t := range s.Turns {
				if m.Content == s.Turns[t].Prompt {
					return t, 0, true
				}
			}
		}
	}
	return 0, 0, false
}

// lostReply answers a request whose position is lost; the run reports it.
const lostReply = "bench: the script lost its place in the session"

// reikaScript answers reika's requests by their position in the session,
// and its note rounds with a note.
func reikaScript(s *Session, ann *annotations) enginetest.Script {
	return func(r *enginetest.Request) enginetest.Reply {
		turn, step, ok := s.positionOf(r.Messages)
		if r.ToolChoice == "none" {
			ann.set(r.Index, annotation{Kind: kindNote, Round: s.Round(turn, step), Lost: !ok})
			return enginetest.Text(s.note(turn, step))
		}
		if !ok {
			ann.set(r.Index, annotation{Kind: kindMain, Round: -1, Lost: true})
			return enginetest.Text(lostReply)
		}
		ann.set(r.Index, annotation{Kind: kindMain, Round: s.Round(turn, step)})
		return s.reply(turn, step)
	}
}

// cursor is where a peer replay is: the step it asks for, or a summary
// call of a given length.
type cursor struct {
	mu         sync.Mutex
	turn, step int
	summary    int // > 0: the next request is a summary call of about this many tokens
}

func (c *cursor) at(turn, step int) {
	c.mu.Lock()
	c.turn, c.step, c.summary = turn, step, 0
	c.mu.Unlock()
}

func (c *cursor) summarize(tokens int) {
	c.mu.Lock()
	c.summary = tokens
	c.mu.Unlock()
}

// peerScript answers a peer replay's requests at the cursor. Main requests
// are checked against the position their messages show.
func peerScript(s *Session, cur *cursor, ann *annotations) enginetest.Script {
	return func(r *enginetest.Request) enginetest.Reply {
		cur.mu.Lock()
		turn, step, summary := cur.turn, cur.step, cur.summary
		cur.mu.Unlock()
		if summary > 0 {
			ann.set(r.Index, annotation{Kind: kindSummary, Round: s.Round(turn, step)})
			return enginetest.Text(s.summary(turn, step, summary))
		}
		t, st, ok := s.positionOf(r.Messages)
		lost := !ok || t != turn || st != step
		ann.set(r.Index, annotation{Kind: kindMain, Round: s.Round(turn, step), Lost: lost})
		return s.reply(turn, step)
	}
}

// note is reika's note before step of turn: what the model established,
// as it would write it, 150 to 400 tokens.
func (s *Session) note(turn, step int) string {
	if turn >= len(s.Turns) {
		return "Nothing established yet."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Established so far on task %d (%s):\n", turn+1, firstWords(s.Turns[turn].Prompt, 18))
	steps := s.Turns[turn].Steps[:min(step, len(s.Turns[turn].Steps))]
	from := max(0, len(steps)-10)
	b.WriteString("Done:\n")
	for _, st := range steps[from:] {
		for _, d := range st.Did {
			fmt.Fprintf(&b, "- %s\n", d)
		}
	}
	b.WriteString("Findings:\n")
	n := 0
	for i := len(steps) - 1; i >= 0 && n < 5; i-- {
		if f := steps[i].Finding; f != "" {
			fmt.Fprintf(&b, "- %s\n", f)
			n++
		}
	}
	b.WriteString("Remaining: finish reading the callers, check the tests, then answer.")
	return b.String()
}

// summary is a peer's summary at step of turn, of about tokens tokens:
// the sections a summarizing agent writes (request, all user messages,
// files and what was found in them, current work, next step), cut to
// length.
func (s *Session) summary(turn, step, tokens int) string {
	chars := tokens * 7 / 2 // the fake's prose density
	var b strings.Builder
	b.WriteString("Summary of the conversation so far.\n\n1. Primary request and intent:\n")
	fmt.Fprintf(&b, "%s\n\n2. All user messages:\n", s.Turns[turn].Prompt)
	for t := 0; t <= turn; t++ {
		fmt.Fprintf(&b, "- %s\n", s.Turns[t].Prompt)
	}
	b.WriteString("\n3. Current work:\n")
	cur := s.Turns[turn].Steps[:min(step, len(s.Turns[turn].Steps))]
	for i := len(cur) - 1; i >= 0 && i >= len(cur)-6; i-- {
		for _, d := range cur[i].Did {
			fmt.Fprintf(&b, "- %s\n", d)
		}
	}
	b.WriteString("\n4. Files, searches and findings (newest first):\n")
	for t := turn; t >= 0 && b.Len() < chars; t-- {
		steps := s.Turns[t].Steps
		if t == turn {
			steps = cur
		}
		for i := len(steps) - 1; i >= 0 && b.Len() < chars; i-- {
			for _, d := range steps[i].Did {
				fmt.Fprintf(&b, "- %s\n", d)
			}
			if f := steps[i].Finding; f != "" {
				fmt.Fprintf(&b, "  %s\n", f)
			}
		}
	}
	out := b.String()
	if len(out) > chars {
		out = out[:strings.LastIndexByte(out[:chars], '\n')+1]
	}
	return out + "\n5. Next step: continue with the current task where it stopped."
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) <= n {
		return s
	}
	return strings.Join(f[:n], " ") + " …"
}
