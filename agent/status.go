package agent

import (
	"fmt"
	"strings"

	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// toldState is what the editor was told: the last status published, and
// the conditions announced (notice), each said once while it holds.
// Guarded by Agent.mu.
type toldState struct {
	status  Status
	noticed map[string]bool
}

// Status is the current status item.
func (a *Agent) Status() Status {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.told.status
}

// publishStatus recomputes the status and sends it. sess is the session of
// the caller that owns it (the running turn); others pass nil and the last
// size stands.
func (a *Agent) publishStatus(sess *session) Status {
	a.mu.Lock()
	busy := a.turn.busy
	a.mu.Unlock()
	return a.publishStatusBusy(sess, busy)
}

// publishStatusBusy is publishStatus with the busy flag given.
func (a *Agent) publishStatusBusy(sess *session, busy bool) Status {
	g := gaugeOf(sess)
	a.mu.Lock()
	st, info := a.statusHeadLocked(sess, busy)
	if g.chip == nil && a.eng.info != nil && a.sess == nil {
		// Before the first turn: the window, and what the fixed prefix
		// will take of it.
		var c ctxwin.Chip
		c, g.b, g.known = prefixChip(a.set, info.Window, a.opts.Workspace.Root())
		g.chip = &c
	}
	if g.chip != nil {
		setChipStatus(&st, g, info)
		st.Tooltip += prefixLine(sess)
	}
	st.Tooltip = strings.TrimLeft(st.Tooltip+a.mcpTooltipLocked(), "\n")
	a.setLevelLocked(&st, g.chip)
	a.modeStatusLocked(&st)
	a.applyLoading(&st)
	warn := st.Level == LevelWarning
	a.told.status = st
	if !warn {
		delete(a.told.noticed, "warn80")
	}
	a.mu.Unlock()
	if warn && st.Percent != nil {
		a.noticeWarn80(st, g.shrunk)
	}
	a.events.Status(st)
	return st
}

// sessionGauge is what a session's context manager says for the status.
type sessionGauge struct {
	chip   *ctxwin.Chip  // nil without a session
	b      ctxwin.Budget // valid when known
	known  bool          // the window is known
	ratio  float64       // the estimator's learned ratio (0: none yet)
	shrunk bool          // a shed or fold ran in the last round
	tally  PromptTally
}

// gaugeOf reads sess's gauge; a nil sess gives the zero gauge. The caller
// owns sess (it is read without a.mu).
func gaugeOf(sess *session) sessionGauge {
	var g sessionGauge
	if sess == nil {
		return g
	}
	c := sess.m.Gauge().Chip()
	g.chip = &c
	g.b, g.known = sess.m.Gauge().Budget()
	g.ratio = sess.m.Prices().LearnedRatio()
	g.shrunk = sess.shrunkAt > 0 && sess.shrunkAt == sess.m.H.Rounds()
	if sess.tally != nil {
		g.tally = *sess.tally
	}
	return g
}

// statusHeadLocked is the last status with busy, the session id, the model
// and the window source brought up to date, and the model info they came
// from: sess's when given (with its manager's window), else the agent's.
// a.mu is held.
func (a *Agent) statusHeadLocked(sess *session, busy bool) (Status, llm.ModelInfo) {
	st := a.told.status
	st.Busy = busy
	var info llm.ModelInfo
	if a.eng.info != nil {
		info = *a.eng.info
	}
	if sess != nil {
		info = sess.modelInfo()
		st.Session = sess.id
	} else if a.sess != nil {
		st.Session = a.sess.id
	}
	st.Model = info.Model
	st.WindowSource = info.WindowSource
	if st.WindowSource == "" {
		st.WindowSource = llm.SourceNone
	}
	return st, info
}

// setChipStatus sets st's text, size and tooltip from g's chip (not nil),
// and its window, shed point and percent when the window is known (nil
// when not).
func setChipStatus(st *Status, g sessionGauge, info llm.ModelInfo) {
	st.Text, st.Size = g.chip.Text, g.chip.Size
	st.Window, st.ShedPoint, st.Percent = nil, nil, nil
	if g.known {
		w, s, p := g.chip.Window, g.chip.ShedPoint, g.chip.Percent
		st.Window, st.ShedPoint, st.Percent = &w, &s, &p
	}
	st.Tooltip = tooltip(g.chip, g.b, g.known, info, g.ratio, g.tally)
}

// setLevelLocked sets st's level: an error while the agent has a failure
// (whose text ends the tooltip), a warning when the chip warns or the
// percent reaches ctxwin.WarningPercent, else OK. chip may be nil. a.mu is
// held.
func (a *Agent) setLevelLocked(st *Status, chip *ctxwin.Chip) {
	switch {
	case a.eng.failure != "":
		st.Level = LevelError
		st.Tooltip = strings.TrimSpace(st.Tooltip + "\n\n" + a.eng.failure)
	case chip != nil && chip.Warning:
		st.Level = LevelWarning
	case st.Percent != nil && *st.Percent >= ctxwin.WarningPercent:
		st.Level = LevelWarning
	default:
		st.Level = LevelOK
	}
}

// noticeWarn80 sends the warning notice of st (a warning with a percent),
// once per crossing. Right after a shrink that could not bring the size
// below 80%, a shed is not what comes next: it says what fills the window
// instead.
func (a *Agent) noticeWarn80(st Status, shrunk bool) {
	next := "older tool output will be shed soon"
	if shrunk {
		next = "even after shedding, the newest results fill most of the window"
	}
	a.notice("warn80", LevelWarning, fmt.Sprintf("Context at %d%% of the shed point (%s): %s", *st.Percent, st.Text, next))
}

// prefixChip is the chip before the first turn: what the fixed prefix will
// take (estimated at four characters a token) of a window of window tokens
// (0: unknown).
func prefixChip(set Settings, window int, root string) (c ctxwin.Chip, b ctxwin.Budget, known bool) {
	size := prefixChars(set, window, root) / 4
	if window <= 0 {
		return ctxwin.NewChip(size, nil), b, false
	}
	b = ctxwin.NewBudget(window, ctxwin.Reserve{Pinned: set.MinGenTokens}.Tokens(window))
	return ctxwin.NewChip(size, &b), b, true
}

// initialStatus is the status before discovery has answered (docs/protocol.md):
// the size of the fixed prefix with no window.
func initialStatus(set Settings, root string) Status {
	c, _, _ := prefixChip(set, 0, root)
	return Status{Text: c.Text, Size: c.Size, Level: LevelOK, WindowSource: llm.SourceNone,
		Tooltip: fmt.Sprintf("Context: %d tokens of fixed prefix\nAsking the engine for its context window…", c.Size)}
}

// tooltip is the budget breakdown behind the chip, and what the session's
// requests cost the engine.
func tooltip(c *ctxwin.Chip, b ctxwin.Budget, known bool, info llm.ModelInfo, ratio float64, tally PromptTally) string {
	var t strings.Builder
	if !known {
		fmt.Fprintf(&t, "Context: %d tokens (no known window: nothing is shed or folded)\n", c.Size)
		if info.Reason != "" {
			fmt.Fprintf(&t, "Window unknown: %s\n", info.Reason)
		}
		t.WriteString("Set REIKA_CONTEXT_WINDOW to enable context management.\n")
	} else {
		fmt.Fprintf(&t, "Context: %d of %d tokens, %d%% of the shed point\n", c.Size, b.Window, c.Percent)
		fmt.Fprintf(&t, "Window: %d tokens (from %s)\n", b.Window, info.WindowSource)
		fmt.Fprintf(&t, "Reserve: %d · usable %d\n", b.Reserve, b.Usable)
		fmt.Fprintf(&t, "Shed point: %d → shed target %d\n", b.ShedPoint, b.ShedTarget)
		fmt.Fprintf(&t, "Fold keeps: %d · recap: %d\n", b.FoldKeeps, b.Recap)
	}
	if info.Model != "" {
		fmt.Fprintf(&t, "Model: %s", info.Model)
		if info.Engine != "" {
			fmt.Fprintf(&t, " (%s)", info.Engine)
		}
		t.WriteString("\n")
	}
	if ratio > 0 {
		fmt.Fprintf(&t, "Estimate: %.2f chars/token learned\n", ctxwin.BaselineCharsPerToken/ratio)
	}
	if line := tally.String(); line != "" {
		t.WriteString(line + "\n")
	}
	return strings.TrimRight(t.String(), "\n")
}

// notice sends a one-line message; with a key, only once while the
// condition holds (delete the key when it ends). A warning also goes to the
// log, once: the server's log keeps it, and `run` prints it from there.
func (a *Agent) notice(key, level, text string) {
	if key != "" {
		a.mu.Lock()
		seen := a.told.noticed[key]
		a.told.noticed[key] = true
		a.mu.Unlock()
		if seen {
			return
		}
	}
	if level == LevelWarning {
		a.logf("reika: %s", text)
	}
	a.events.Notice(Notice{Level: level, Text: text})
}
