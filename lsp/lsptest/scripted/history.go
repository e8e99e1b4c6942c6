package scripted

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reika-lsp/reika-lsp/agent"
)

// The session history of a scripted agent, kept in memory as the real
// agent keeps it on disk: the sessions NewSession left ("s1", "s2"...)
// with their events and turns, and the current one. Resume and delete are
// refused while a turn runs; a title is the first prompt's first line
// unless renamed.

// pastSession is a session the agent is not in.
type pastSession struct {
	turns   int
	prompt  string
	events  []agent.Event
	started time.Time
}

// leaveLocked keeps the current session in the history. a.mu is held.
func (a *Agent) leaveLocked() {
	if a.past == nil {
		a.past = map[string]*pastSession{}
	}
	a.past[a.sessionLocked()] = &pastSession{turns: a.turns, prompt: a.prompt, events: a.events, started: a.startedLocked()}
}

func (a *Agent) startedLocked() time.Time {
	if a.started.IsZero() {
		a.started = time.Now().UTC()
	}
	return a.started
}

// Sessions lists the current session and those NewSession and
// ResumeSession left, the newest first.
func (a *Agent) Sessions() ([]agent.SessionInfo, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := []agent.SessionInfo{a.infoLocked(a.sessionLocked(), a.turns, a.prompt, a.events, a.startedLocked(), true)}
	for id, p := range a.past {
		if id != a.sessionLocked() {
			out = append(out, a.infoLocked(id, p.turns, p.prompt, p.events, p.started, false))
		}
	}
	slices.SortFunc(out, func(x, y agent.SessionInfo) int { return strings.Compare(y.Started+y.ID, x.Started+x.ID) })
	return out, nil
}

func (a *Agent) infoLocked(id string, turns int, prompt string, events []agent.Event, started time.Time, current bool) agent.SessionInfo {
	title := a.titles[id]
	if title == "" {
		title, _, _ = strings.Cut(strings.TrimSpace(prompt), "\n")
	}
	size := 0
	for _, ev := range events {
		size += len(ev.Text)
	}
	ts := started.Format(time.RFC3339)
	return agent.SessionInfo{ID: id, Title: title, Started: ts, Updated: ts, Turns: turns, Bytes: int64(size), Current: current}
}

func unknown(id string) error {
	return fmt.Errorf("session %q: %w", id, agent.ErrUnknownSession)
}

// OpenSession answers with the session's events, whatever maxChars.
func (a *Agent) OpenSession(id string, maxChars int) (agent.TranscriptPage, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if id == a.sessionLocked() {
		return agent.TranscriptPage{Session: id, Events: append([]agent.Event{}, a.events...)}, nil
	}
	p, ok := a.past[id]
	if !ok {
		return agent.TranscriptPage{Events: []agent.Event{}}, unknown(id)
	}
	return agent.TranscriptPage{Session: id, Events: append([]agent.Event{}, p.events...)}, nil
}

// ResumeSession makes a past session the current one; refused while a
// turn runs.
func (a *Agent) ResumeSession(id string) error {
	a.mu.Lock()
	if a.running != nil {
		a.mu.Unlock()
		return fmt.Errorf("a turn is running")
	}
	if id == a.sessionLocked() {
		a.mu.Unlock()
		return nil
	}
	p, ok := a.past[id]
	var n int
	if _, err := fmt.Sscanf(id, "s%d", &n); !ok || err != nil {
		a.mu.Unlock()
		return unknown(id)
	}
	a.leaveLocked()
	delete(a.past, id)
	a.session, a.turns, a.prompt, a.events, a.started, a.size = n, p.turns, p.prompt, p.events, p.started, 0
	a.mu.Unlock()
	a.Opts.Events.Status(a.Status())
	return nil
}

// RenameSession sets the session's title ("" gives back the first
// prompt's line).
func (a *Agent) RenameSession(id, title string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.past[id]; !ok && id != a.sessionLocked() {
		return unknown(id)
	}
	if a.titles == nil {
		a.titles = map[string]string{}
	}
	a.titles[id] = strings.TrimSpace(title)
	return nil
}

// DeleteSession forgets a session; deleting the current one starts the
// next (as the real agent's next ask does); refused while a turn runs.
func (a *Agent) DeleteSession(id string) error {
	a.mu.Lock()
	if id == a.sessionLocked() {
		if a.running != nil {
			a.mu.Unlock()
			return fmt.Errorf("a turn is running")
		}
		a.nextSessionLocked()
		a.mu.Unlock()
		a.Opts.Events.Status(a.Status())
		return nil
	}
	defer a.mu.Unlock()
	if _, ok := a.past[id]; !ok {
		return unknown(id)
	}
	delete(a.past, id)
	delete(a.titles, id)
	return nil
}

// nextSessionLocked starts a session numbered after every one known.
func (a *Agent) nextSessionLocked() {
	n := a.session
	for id := range a.past {
		var k int
		if _, err := fmt.Sscanf(id, "s%d", &k); err == nil && k > n {
			n = k
		}
	}
	a.session = n + 1
	a.turns, a.size, a.prompt, a.events, a.started = 0, 0, "", nil, time.Time{}
}
