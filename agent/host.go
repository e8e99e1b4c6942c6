package agent

import (
	"context"

	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// The layers of package agent, from the bottom, by lifetime: a session
// (session.go, log.go, recorder.go) owns its context manager (and so its
// window), its log and what it remembers of its requests, and records
// its events to the log and its sink; a turn (run, in loop.go, with
// debugline.go and chunkreuse.go) drives one session's rounds and reaches
// the agent that runs it only through host; the Agent (agent.go,
// enginestate.go, discovery.go, changes.go, status.go) owns the sessions,
// the engine and its model, the settings and what the editor is told,
// and starts the turns under its run claim (turnstate.go).

// host is what a turn needs of the agent that runs it. *Agent implements
// it; a turn holds nothing else of the agent.
type host interface {
	sink
	// settings are the settings in force.
	settings() Settings
	// currentModel is the model to send requests to.
	currentModel() llm.Model
	// adoptWindow records a window learned from the engine's refusal.
	adoptWindow(tokens int)
	// countNew counts the texts new to the next request with the engine.
	countNew(ctx context.Context, m *ctxwin.Manager)
	// applyChanges applies to sess what changed since its last round.
	applyChanges(sess *session)
	// repoMap is the repository map of root.
	repoMap(root string) repoMapper
	// logLine writes a line to the server's log.
	logLine(format string, args ...any)
	// clearNotice ends a condition told with notice (sink), so that it
	// is told again when it comes back.
	clearNotice(key string)
	// rediscover looks for the engine again, in the background.
	rediscover()
	// reportProgress sends a turn's progress to the editor;
	// publishStatus publishes sess's status and returns it.
	reportProgress(p Progress)
	publishStatus(sess *session) Status
	// noShiftOnce reports true the first time it is asked, per agent: the
	// debug line says once that the model cannot shift.
	noShiftOnce() bool
}

var _ host = (*Agent)(nil)

func (a *Agent) currentModel() llm.Model {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.eng.model
}

func (a *Agent) adoptWindow(tokens int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.eng.info != nil {
		a.eng.info.Window, a.eng.info.WindowSource = tokens, llm.SourceOverflow
	}
}

func (a *Agent) logLine(format string, args ...any) { a.logf(format, args...) }

func (a *Agent) transcript(ev Event) { a.events.Transcript(ev) }

func (a *Agent) reportProgress(p Progress) { a.events.Progress(p) }

func (a *Agent) noShiftOnce() bool {
	said := false
	a.eng.reuseWarned.Do(func() { said = true })
	return said
}
