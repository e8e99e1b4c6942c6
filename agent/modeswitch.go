package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/reika-lsp/reika-lsp/agent/tools"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// currentMode is the mode sessions are to be in: the mode setting, or the
// last /mode.
func (a *Agent) currentMode() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.mode != "" {
		return a.mode
	}
	if a.set.Mode != "" {
		return a.set.Mode
	}
	return ModeCode
}

// setMode makes name the mode, from the next request on; it must exist.
func (a *Agent) setMode(name string) (Mode, error) {
	m, err := resolveMode(a.opts.Workspace.Root(), name)
	if err != nil {
		return m, err
	}
	a.mu.Lock()
	a.mode = m.Name
	a.mu.Unlock()
	a.publishStatus(nil)
	return m, nil
}

// findSkills finds the workspace's skills and says once, as a warning,
// which SKILL.md files could not be used.
func (a *Agent) findSkills(root string) skillSet {
	set := findSkills(root)
	for _, p := range set.problems {
		msg := "Skill not used: " + p
		a.notice("skill:"+p, LevelWarning, msg)
	}
	return set
}

// bindTools gives a resumed session the tools its log says it offers, and
// the skills on disk now.
func (a *Agent) bindTools(sess *session) {
	if sess.offer.mode == "" {
		sess.offer.mode = ModeCode
	}
	if !a.settings().Minimal {
		sess.offer.skills = findSkills(sess.root)
	}
	all := append(append([]tools.Tool(nil), a.tools...), skillTool{set: sess.offer.skills})
	sess.offer.tools = pickTools(all, sess.m.H.Tools)
}

// replayed takes from a replayed record what the session keeps besides its
// history: the tally, the mode of a switch, and the directories whose
// instructions its results carry.
func (s *session) replayed(r record) {
	switch r.Kind {
	case recState:
		if r.Tally != nil {
			*s.tally = *r.Tally
		}
	case recPrefix:
		s.offer.mode = r.Mode
	case recRound:
		for _, res := range r.Results {
			if res != nil {
				deliveredIn(res, s.offer.nested)
			}
		}
	}
}

// switchMode brings the session to the agent's mode when it is in another:
// one change of the fixed prefix (the mode's prompt at the end of the
// system message, the mode's tools), logged, and said in the transcript.
// The session's owner calls it before a turn.
func (a *Agent) switchMode(sess *session) error {
	want := a.currentMode()
	if want == sess.offer.mode {
		return nil
	}
	mode, err := resolveMode(sess.root, want)
	if err != nil {
		return err
	}
	ts := sessionTools(a.tools, sess.offer.skills, mode)
	system := withMode(sess.m.H.System, mode)
	specs := tools.Specs(ts)
	sess.m.Setup().Prefix(system, specs)
	sess.offer.mode, sess.offer.tools = mode.Name, ts
	sess.offer.split = withToolParts(switchedSplit(sess.offer.split, specs, mode), ts)
	sess.log.append(record{Kind: recPrefix, System: system, Tools: specs, Mode: mode.Name})
	text := fmt.Sprintf("Mode %s from the next request (%s): the tools are %s; the fixed prefix changed once.",
		mode.Name, mode.Description, strings.Join(toolNames(ts), ", "))
	a.logf("reika: %s", text)
	sess.emit(Event{Kind: EventInfo, Text: text})
	sess.log.append(record{Kind: recInfo, Text: text})
	return nil
}

// modeOfStatus is the status's mode field: empty for code.
func modeOfStatus(name string) string {
	if name == ModeCode {
		return ""
	}
	return name
}

// modeStatusLocked shows the mode in st when it is not code: the status's
// mode field, the chip's text and the tooltip's first line. a.mu is held.
func (a *Agent) modeStatusLocked(st *Status) {
	mode := a.mode
	if mode == "" {
		mode = a.set.Mode
	}
	if mode == "" {
		mode = ModeCode
	}
	old := st.Mode
	st.Mode = modeOfStatus(mode)
	if old != "" {
		st.Text = strings.TrimPrefix(st.Text, old+" · ")
		st.Tooltip = strings.TrimPrefix(st.Tooltip, "Mode: "+old+"\n")
	}
	if st.Mode != "" {
		st.Text = st.Mode + " · " + st.Text
		st.Tooltip = "Mode: " + st.Mode + "\n" + st.Tooltip
	}
}

// keepSessionMode keeps a resumed session in its mode (one /mode chose,
// say) unless the mode setting names one (a flag, the environment, the
// editor or a profile; an empty one names none).
func (a *Agent) keepSessionMode(sess *session) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.set.Mode == "" && a.mode == "" && sess.offer.mode != ModeCode {
		a.mode = sess.offer.mode
	}
}

// WithMode is s with the mode setting set to name, from where (a flag).
func WithMode(s Settings, name, from string) (Settings, error) {
	if err := lookupSetting("mode").set(&s, name); err != nil {
		return s, err
	}
	src := make(map[string]string, len(s.Sources)+1)
	for k, v := range s.Sources {
		src[k] = v
	}
	src["mode"] = from
	s.Sources = src
	return s, nil
}

// CheckMode says whether the mode named name exists in the workspace at
// root ("" is code).
func CheckMode(root, name string) error {
	_, err := resolveMode(root, name)
	return err
}

// switchIdle switches the session to the agent's mode now, when no turn
// holds it, so that its log says so (a later `run --continue` resumes in
// it); no request goes out in between, so it is the same prefix change
// the next request would make. A running turn's session switches at its
// next turn.
func (a *Agent) switchIdle() {
	_, end, err := a.begin(context.Background())
	if err != nil {
		return
	}
	defer end()
	a.mu.Lock()
	sess := a.sess
	a.mu.Unlock()
	if sess == nil {
		return
	}
	if err := a.switchMode(sess); err != nil {
		a.logf("reika: %v", err)
		return
	}
	if err := sess.log.sync(); err != nil {
		a.logf("reika: %s", logStopped(err))
	}
	a.publishStatusBusy(sess, false)
}

// switchedSplit is a session's split after a switch to mode: its tools and
// its mode's prompt replaced.
func switchedSplit(split []PrefixPart, specs []ctxwin.ToolSpec, mode Mode) []PrefixPart {
	if split == nil {
		return nil
	}
	var out []PrefixPart
	for _, p := range split {
		switch p.Name {
		case PartMode:
			continue
		case PartTools:
			p.Chars, p.Note = ctxwin.ToolChars(specs), ""
		}
		out = append(out, p)
	}
	if mode.Prompt != "" {
		out = append(out, PrefixPart{Name: PartMode, Chars: len(withMode("\n", mode)) - 1, Note: mode.Name})
	}
	return out
}

// prefixLine is the tooltip's line of sess's fixed prefix, part by part,
// at four characters a token; "" without a split.
func prefixLine(sess *session) string {
	if sess == nil || len(sess.offer.split) == 0 {
		return ""
	}
	var parts []string
	for _, p := range sess.offer.split {
		parts = append(parts, fmt.Sprintf("%s ~%d", p.Name, p.Chars/4))
	}
	return "\nPrefix: " + strings.Join(parts, " · ") + " tokens (estimated)"
}
