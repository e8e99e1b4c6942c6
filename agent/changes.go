package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/reika-lsp/reika-lsp/agent/llm"
)

// Settings and model info that change while a session exists (an editor's
// settings, a new endpoint, the engine answering discovery at last) reach
// the session through its owner: a running turn applies them at its next
// round and says so in the transcript; an idle session gets them at once
// (the status shows them) and the next turn says what changed.
//
// The rule: the agent owns the settings and what the engine said
// (Agent.set, Agent.eng.info); the session's manager owns the session's
// window. Whatever changes the agent's settings or model info marks the
// session outdated (outdatedLocked), under Agent.mu; the session's owner,
// and only it, takes the agent's values into the manager when it finds
// the mark (applyChanges), and clears it. Nothing else copies the window.

// outdatedLocked marks the session, and the one being started, as behind
// the agent's settings or model info. Agent.mu is held.
func (a *Agent) outdatedLocked() {
	for _, sess := range []*session{a.sess, a.turn.starting} {
		if sess != nil {
			sess.outdated = true
		}
	}
}

// starting makes sess, which the caller is starting, get the agent's
// changes from now on: what changes after it read the settings and the
// model info reaches it at its first round.
func (a *Agent) starting(sess *session) {
	a.mu.Lock()
	a.turn.starting = sess
	a.mu.Unlock()
}

// setSessionLocked makes sess (nil: none) the agent's session. Agent.mu
// is held.
func (a *Agent) setSessionLocked(sess *session) {
	a.sess, a.turn.starting, a.turn.count = sess, nil, 0
	if sess != nil {
		a.turn.count = sess.m.H.Turns()
	}
}

// UpdateSettings applies changed settings: approvals at once; budgets and
// a new endpoint or model (when Options.NewModel is set) at once when no
// turn runs, else from the running turn's next round, which says so in the
// transcript. The fixed prefix (minimal, repoMapBudget) changes with the
// next session.
func (a *Agent) UpdateSettings(s Settings) error {
	s = withDefaults(s)
	a.mu.Lock()
	old := a.set
	a.set = s
	a.outdatedLocked()
	if s.Mode != old.Mode {
		a.mode = "" // a changed setting wins over /mode
	}
	newModel := a.opts.NewModel
	a.mu.Unlock()
	a.appr.setMode(s.Approve)
	hideSecrets(s, a.logf)
	if newModel != nil && (old.BaseURL != s.BaseURL || old.Model != s.Model || old.APIKey != s.APIKey ||
		old.ContextWindow != s.ContextWindow || old.ModelsURL != s.ModelsURL || old.CacheReuse != s.CacheReuse || old.EngineRetry != s.EngineRetry) {
		m, err := newModel(s)
		if err != nil {
			return err
		}
		a.watchLoading(m)
		a.mu.Lock()
		a.eng.model, a.eng.info = m, nil
		a.outdatedLocked()
		a.mu.Unlock()
		a.stopDiscoveryLoop()
		info, ierr := m.Info(context.Background())
		if ierr == nil {
			a.adopt(m, info)
			return nil
		}
		a.infoFailed(m, ierr)
		a.startDiscovery(m, a.retryWait(), false)
	}
	a.updateIdle()
	return nil
}

// updateIdle applies changed settings or model info to the session now
// when no turn holds it, and publishes the status; a running turn applies
// them itself at its next round.
func (a *Agent) updateIdle() {
	a.mu.Lock()
	a.turn.waitBrief()
	sess := a.sess
	if a.turn.busy || a.closed || sess == nil {
		a.mu.Unlock()
		a.publishStatus(nil)
		return
	}
	a.turn.brief = true
	a.mu.Unlock()
	a.applyChanges(sess)
	a.publishStatusBusy(sess, false)
	a.mu.Lock()
	a.turn.brief = false
	a.turn.idle.Broadcast()
	a.mu.Unlock()
}

// applyChanges brings the session's manager up to date with the settings
// and the model info, when the agent marked it outdated. Only the
// session's owner calls it. What changed is kept in sess.changes for the
// transcript of the next round.
func (a *Agent) applyChanges(sess *session) {
	a.mu.Lock()
	outdated, s := sess.outdated, a.set
	sess.outdated = false
	var info *llm.ModelInfo
	if a.eng.info != nil {
		i := *a.eng.info
		info = &i
	}
	a.mu.Unlock()
	if !outdated {
		return
	}
	m := sess.m
	var what []string
	cur := m.Setup().Settings()
	next := cur
	next.MaxTokens, next.ReasoningRounds, next.MinGenTokens = s.MaxTokens, s.ReasoningRounds, s.MinGenTokens
	if cur.MaxTokens != next.MaxTokens {
		what = append(what, fmt.Sprintf("maxTokens %d → %d", cur.MaxTokens, next.MaxTokens))
	}
	if cur.ReasoningRounds != next.ReasoningRounds {
		what = append(what, fmt.Sprintf("reasoningRounds %d → %d", cur.ReasoningRounds, next.ReasoningRounds))
	}
	if cur.MinGenTokens != next.MinGenTokens {
		what = append(what, fmt.Sprintf("minGenTokens %d → %d", cur.MinGenTokens, next.MinGenTokens))
	}
	if info != nil {
		if info.Model != "" && sess.info.Model != "" && info.Model != sess.info.Model {
			what = append(what, fmt.Sprintf("model %s → %s", sess.info.Model, info.Model))
		}
		window, source := m.Gauge().Window(), sess.info.WindowSource
		if info.Window > 0 {
			// A session that began with no window known (the engine was
			// down) learns one: not a change to report.
			if old := m.Gauge().Window(); old > 0 && info.Window != old {
				what = append(what, fmt.Sprintf("context window %d → %d tokens (from %s)", old, info.Window, info.WindowSource))
			}
			window, source = info.Window, info.WindowSource
		}
		sess.info = withoutWindow(*info)
		sess.setWindow(window, source)
		next.OutputLimit = info.OutputLimit
	}
	m.Setup().Configure(next)
	sess.changes = append(sess.changes, what...)
}

// applyChanges applies what changed since the last round; sayChanges
// reports it in the transcript and the log, once the round before is
// logged.
func (r *run) applyChanges() {
	if !r.sess.subagent {
		r.h.applyChanges(r.sess)
	}
}

func (r *run) sayChanges() {
	if r.sess.subagent || len(r.sess.changes) == 0 {
		return
	}
	text := "Settings changed: " + strings.Join(r.sess.changes, ", ") + fmt.Sprintf("; applied from round %d.", r.sess.m.H.Rounds()+1)
	r.sess.changes = nil
	// The transcript and the session log carry it (a line in the server's
	// log too made `run` print it twice).
	r.emit(Event{Kind: EventInfo, Text: text})
	r.sess.log.append(record{Kind: recInfo, Text: text})
}
