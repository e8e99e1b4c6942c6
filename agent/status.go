package agent

import (
	"fmt"
	"strings"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// Status is the current status item.
func (a *Agent) Status() Status {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.status
}

// publishStatus recomputes the status and sends it. sess is the session of
// the caller that owns it (the running turn); others pass nil and the last
// size stands.
func (a *Agent) publishStatus(sess *session) Status {
	a.mu.Lock()
	busy := a.busy
	a.mu.Unlock()
	return a.publishStatusBusy(sess, busy)
}

// publishStatusBusy is publishStatus with the busy flag given.
func (a *Agent) publishStatusBusy(sess *session, busy bool) Status {
	var (
		chip   *ctxwin.Chip
		b      ctxwin.Budget
		known  bool
		ratio  float64
		shrunk bool // a shed or fold ran in the last round
		tally  PromptTally
	)
	if sess != nil {
		c := sess.m.Chip()
		chip = &c
		b, known = sess.m.Budget()
		ratio = sess.m.LearnedRatio()
		shrunk = sess.shrunkAt > 0 && sess.shrunkAt == sess.m.H.Rounds()
		if sess.tally != nil {
			tally = *sess.tally
		}
	}
	a.mu.Lock()
	st := a.status
	st.Busy = busy
	var info ModelInfo
	if a.info != nil {
		info = *a.info
	}
	if sess != nil {
		info = sess.info
		info.Window = sess.m.Window()
		st.Session = sess.id
	} else if a.sess != nil {
		st.Session = a.sess.id
	}
	st.Model = info.Model
	st.WindowSource = info.WindowSource
	if st.WindowSource == "" {
		st.WindowSource = SourceNone
	}
	if chip == nil && a.info != nil && a.sess == nil {
		// Before the first turn: the window, and what the fixed prefix
		// will take of it.
		var c ctxwin.Chip
		c, b, known = prefixChip(a.set, info.Window)
		chip = &c
	}
	if chip != nil {
		st.Text, st.Size = chip.Text, chip.Size
		st.Window, st.ShedPoint, st.Percent = nil, nil, nil
		if known {
			w, s, p := chip.Window, chip.ShedPoint, chip.Percent
			st.Window, st.ShedPoint, st.Percent = &w, &s, &p
		}
		st.Tooltip = tooltip(chip, b, known, info, ratio, tally)
	}
	switch {
	case a.failure != "":
		st.Level = LevelError
		st.Tooltip = strings.TrimSpace(st.Tooltip + "\n\n" + a.failure)
	case chip != nil && chip.Warning:
		st.Level = LevelWarning
	case st.Percent != nil && *st.Percent >= ctxwin.WarningPercent:
		st.Level = LevelWarning
	default:
		st.Level = LevelOK
	}
	a.applyLoading(&st)
	warn := st.Level == LevelWarning
	a.status = st
	if !warn {
		delete(a.noticed, "warn80")
	}
	a.mu.Unlock()
	if warn && st.Percent != nil {
		// Once per crossing. Right after a shrink that could not bring the
		// size below 80%, a shed is not what comes next: say what fills
		// the window instead.
		next := "older tool output will be shed soon"
		if shrunk {
			next = "even after shedding, the newest results fill most of the window"
		}
		a.notice("warn80", LevelWarning, fmt.Sprintf("Context at %d%% of the shed point (%s): %s", *st.Percent, st.Text, next))
	}
	a.events.Status(st)
	return st
}

// prefixChip is the chip before the first turn: what the fixed prefix will
// take (estimated at four characters a token) of a window of window tokens
// (0: unknown).
func prefixChip(set Settings, window int) (c ctxwin.Chip, b ctxwin.Budget, known bool) {
	prefix := BasePrefixChars()
	if !set.Minimal {
		prefix += ctxwin.RepoMapChars(window)
		if set.RepoMapBudget > 0 {
			prefix += set.RepoMapBudget - ctxwin.RepoMapChars(window)
		}
	}
	size := prefix / 4
	if window <= 0 {
		return ctxwin.NewChip(size, nil), b, false
	}
	b = ctxwin.NewBudget(window, ctxwin.Reserve{Pinned: set.MinGenTokens}.Tokens(window))
	return ctxwin.NewChip(size, &b), b, true
}

// initialStatus is the status before discovery has answered (PROTOCOL.md):
// the size of the fixed prefix with no window.
func initialStatus(set Settings) Status {
	c, _, _ := prefixChip(set, 0)
	return Status{Text: c.Text, Size: c.Size, Level: LevelOK, WindowSource: SourceNone,
		Tooltip: fmt.Sprintf("Context: %d tokens of fixed prefix\nAsking the engine for its context window…", c.Size)}
}

// tooltip is the budget breakdown behind the chip, and what the session's
// requests cost the engine.
func tooltip(c *ctxwin.Chip, b ctxwin.Budget, known bool, info ModelInfo, ratio float64, tally PromptTally) string {
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
// condition holds (delete the key when it ends).
func (a *Agent) notice(key, level, text string) {
	if key != "" {
		a.mu.Lock()
		seen := a.noticed[key]
		a.noticed[key] = true
		a.mu.Unlock()
		if seen {
			return
		}
	}
	a.events.Notice(Notice{Level: level, Text: text})
}
