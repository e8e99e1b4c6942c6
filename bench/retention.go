package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// Retention: prefill can always be cut by showing the model less, so the
// bench also measures what the model keeps. At each task's final answer
// it takes the facts the answer uses, which the scripted session knows,
// and asks which are still in view in the request the answer replies to:
//
//   - a declaration it cites (`Builder.Grow` (strings/builder.go:107)) is in
//     view when the request shows that line as the read tool numbers it
//     ("107→func (b *Builder) Grow(n int) {"), when a grep result or any
//     text names the place ("strings/builder.go:107", as notes, recaps and
//     summaries write findings), or when an outline lists the declaration
//     at that line ("L107-121 func (b *Builder) Grow(n int)");
//   - the code it quotes is in view in the share of its lines the request
//     shows as the read tool numbers them.
//
// A task's retention is the share of its facts in view (the quote counts
// as one fact, by its share), 0 when no request served its answer; a row's
// is the mean over the tasks.

// Fact is one fact an answer uses: the declaration Name at Path:Line (its
// line's text in Lines), or, without a Name, the code of Lines quoted from
// Path starting at Line.
type Fact struct {
	Path  string   `json:"path"`
	Line  int      `json:"line"`
	Name  string   `json:"name,omitempty"`
	Lines []string `json:"lines"`
}

// retention is the share of the facts in view in msgs.
func retention(facts []Fact, msgs []ctxwin.Message) float64 {
	return share(facts, requestText(msgs), inView)
}

// share is the mean of in over facts, 1 when there are none.
func share(facts []Fact, text string, in func(Fact, string) float64) float64 {
	if len(facts) == 0 {
		return 1
	}
	sum := 0.0
	for _, f := range facts {
		sum += in(f, text)
	}
	return sum / float64(len(facts))
}

// requestText is the text of a request's messages and tool calls, a line
// break after each.
func requestText(msgs []ctxwin.Message) string {
	var text strings.Builder
	for _, m := range msgs {
		text.WriteString(m.Content)
		text.WriteByte('\n')
		for _, c := range m.ToolCalls {
			text.WriteString(c.Arguments)
			text.WriteByte('\n')
		}
	}
	return text.String()
}

// inView is how much of fact f the request text shows: 0 or 1 for a
// declaration, the share of its lines for a quote.
func inView(f Fact, text string) float64 {
	if f.Name == "" {
		shown := 0
		for i, l := range f.Lines {
			if numbered(text, f.Line+i, l) {
				shown++
			}
		}
		return float64(shown) / float64(max(len(f.Lines), 1))
	}
	if len(f.Lines) > 0 && numbered(text, f.Line, f.Lines[0]) || named(text, f.Path, f.Line) || outlined(text, f.Line, f.Name) {
		return 1
	}
	return 0
}

// numbered reports whether text shows line n as the read tool numbers it:
// "n→line", the number not part of a longer one.
func numbered(text string, n int, line string) bool {
	needle := strconv.Itoa(n) + "→" + line + "\n"
	for i := 0; ; {
		j := strings.Index(text[i:], needle)
		if j < 0 {
			return false
		}
		at := i + j
		if at == 0 || text[at-1] < '0' || text[at-1] > '9' {
			return true
		}
		i = at + 1
	}
}

// named reports whether text names path:line, the number not the start of
// a longer one.
func named(text, path string, line int) bool {
	needle := fmt.Sprintf("%s:%d", path, line)
	for i := 0; ; {
		j := strings.Index(text[i:], needle)
		if j < 0 {
			return false
		}
		end := i + j + len(needle)
		if end == len(text) || text[end] < '0' || text[end] > '9' {
			return true
		}
		i = end
	}
}

// outlined reports whether an outline in text lists the declaration name
// at line ("L107-121 func (b *Builder) Grow(n int)", "L12 type T").
func outlined(text string, line int, name string) bool {
	re := regexp.MustCompile(`(?m)^\s*L` + strconv.Itoa(line) + `(-\d+)? .*\b` + regexp.QuoteMeta(name) + `\b`)
	return re.MatchString(text)
}

// answerRetention is, for each turn, the retention and the verbatim
// retention of its facts in the request its answer replied to; 0 for a
// turn whose answer no request served.
func answerRetention(s *Session, recs []enginetest.Recorded, ann *annotations) (lenient, exact []float64) {
	lenient, exact = make([]float64, len(s.Turns)), make([]float64, len(s.Turns))
	for k, t := range answerRequests(s, recs, ann) {
		text := requestText(recs[k].Request.Messages)
		lenient[t] = share(s.Turns[t].Facts, text, inView)
		exact[t] = share(s.Turns[t].Facts, text, verbatimInView)
	}
	return lenient, exact
}

// answerRequests maps the index in recs of the request each task's final
// answer replied to (the first served request of its round) to the task's
// turn.
func answerRequests(s *Session, recs []enginetest.Recorded, ann *annotations) map[int]int {
	rounds := map[int]int{} // round → turn
	for t := range s.Turns {
		rounds[s.Round(t, len(s.Turns[t].Steps)-1)] = t
	}
	out := map[int]int{}
	for k, r := range recs {
		an, ok := ann.get(r.Index)
		if !ok || an.Kind != kindMain || r.Path != "/v1/chat/completions" || r.Status != 200 || r.Overflowed {
			continue
		}
		if t, ok := rounds[an.Round]; ok {
			out[k] = t
			delete(rounds, an.Round)
		}
	}
	return out
}
