package agent

import (
	"errors"
	"fmt"
	"strings"

	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// Room to answer (issue 27): no request goes out with less room for its
// answer than ctxwin.AnswerFloor. A request that cannot leave it is shrunk
// once more; when what no shrink can remove (the fixed prefix and the
// task) is what leaves no room, nothing is sent, and the error gives the
// sizes and advice true for this session.

// roomToAnswer readies the next request's room to answer: nil when the
// request leaves the floor, or when its size rests on the estimate alone
// (a first request on an engine with no tokenizer: max_tokens then holds
// the floor and the engine's report tells the next one).
func (r *run) roomToAnswer() error {
	m := r.sess.m
	room, floor, measured, ok := m.Gauge().AnswerRoom()
	if !ok || room >= floor || !measured {
		return nil
	}
	if ev := m.ShrinkToFit(); ev != nil {
		r.record(ev)
		r.sess.logState()
		if room, _, _, _ = m.Gauge().AnswerRoom(); room >= floor {
			return nil
		}
	}
	b, _ := m.Gauge().Budget()
	prefix, task := m.Gauge().Floor()
	return r.noRoomError(b, prefix, task, nil)
}

// noRoomError says why a request cannot fit the window b: the fixed prefix
// takes prefix tokens and the task task; cause is the engine's refusal,
// when it refused one. Its advice names only what would change something:
// REIKA_MINIMAL when the prefix holds what it drops (and so it is not
// set), a window that holds the prefix and the task as measured, a shorter
// task when the task is what is large.
func (r *run) noRoomError(b ctxwin.Budget, prefix, task int, cause error) error {
	m := r.sess.m
	floor := ctxwin.AnswerFloor(b.Window, b.Reserve)
	parts, dropped := prefixParts(m, prefix)
	var msg strings.Builder
	lead := "nothing was sent: the request cannot leave room for an answer"
	if cause != nil {
		lead = "the engine refused the request, and no retry can leave room for an answer"
	}
	fmt.Fprintf(&msg, "%s in the engine's window of %d tokens. "+
		"The fixed prefix (%s) takes %d tokens and the task %d; with at least %d tokens for the answer, a request can take at most %d, "+
		"and the shed cycle keeps it within %d (the window less the %d-token reserve)",
		lead, b.Window, parts, prefix, task, floor, b.Window-floor, b.Usable, b.Reserve)
	var advice []string
	if dropped > 0 {
		enough := "not enough on its own"
		if prefix-dropped+task <= b.Usable {
			enough = "enough for this window"
		}
		advice = append(advice, fmt.Sprintf("set REIKA_MINIMAL=1 to drop the repo map and AGENTS.md (about %d tokens of the prefix; %s)", dropped, enough))
	}
	w := m.Gauge().WindowFor(prefix + task)
	// llama-server without -np runs slots that share one KV cache, each
	// seeing the whole -c; -np N alone divides -c among them (README).
	give := fmt.Sprintf("give the engine a window of at least %d tokens a slot (llama-server -c %d, or -c %d×N with -np N; vLLM --max-model-len %d)", w, w, w, w)
	if r.sess.info.WindowSource == llm.SourceSetting {
		give += fmt.Sprintf(" and set REIKA_CONTEXT_WINDOW, now %d, to match", b.Window)
	}
	advice = append(advice, give)
	if task > prefix/2 && task > floor {
		advice = append(advice, fmt.Sprintf("ask with a shorter prompt or a smaller selection (the task takes %d tokens)", task))
	}
	msg.WriteString(". To fix it, " + strings.Join(advice, "; or ") + ".")
	if cause != nil {
		return fmt.Errorf("%s: %w", msg.String(), cause)
	}
	return errors.New(msg.String())
}

// prefixParts names what the fixed prefix holds, and what the repo map and
// AGENTS.md take of its prefix tokens (0 when it holds neither: minimal
// mode, or nothing to put there), priced at the prefix's own density.
func prefixParts(m *ctxwin.Manager, prefix int) (string, int) {
	system := m.H.System
	names := []string{"system prompt", "tool definitions"}
	dropped := 0
	for _, p := range []struct{ open, close, name string }{
		{"\n<repo-map>\n", "\n</repo-map>\n", "repo map"},
		{"\n<project-instructions", "\n</project-instructions>\n", "AGENTS.md"},
	} {
		i := strings.Index(system, p.open)
		j := strings.Index(system, p.close)
		if i < 0 || j < i {
			continue
		}
		names = append(names, p.name)
		dropped += j + len(p.close) - i
	}
	chars := len(system) + ctxwin.ToolChars(m.H.Tools)
	if dropped > 0 && chars > 0 {
		dropped = max(dropped*prefix/chars, 1)
	}
	return strings.Join(names, ", "), dropped
}
