package main

import (
	"fmt"
	"io"
	"strings"
)

// minServed is the share of rounds a peer must serve (overflows or not)
// to count against reika's target (issue 28): no such peer both costs less
// and keeps more verbatim, beyond the 95% intervals.
const minServed = 0.98

// dominance is what one window and engine say of reika against the peers.
type dominance struct {
	window  int
	engine  string
	reika   Row
	serving []string // peers serving at least minServed of the rounds
	// cheaper, keeps and dominates are those of serving whose cost's
	// interval lies below reika's, whose verbatim's lies above it, and both.
	cheaper, keeps, dominates []string
}

// dominations is, per window and engine with a reika row, the peers that
// beat reika beyond the intervals.
func dominations(rows []Row) []dominance {
	var out []dominance
	for _, r := range rows {
		if r.Policy != "reika" {
			continue
		}
		d := dominance{window: r.Window, engine: r.Engine, reika: r}
		for _, p := range rows {
			if p.Policy == "reika" || p.Window != r.Window || p.Engine != r.Engine || p.Rounds == 0 ||
				float64(p.Served) < minServed*float64(p.Rounds) {
				continue
			}
			d.serving = append(d.serving, p.Policy)
			cheaper := p.CostCI95[1] < r.CostCI95[0]
			keeps := p.VerbatimCI95[0] > r.VerbatimCI95[1]
			if cheaper {
				d.cheaper = append(d.cheaper, p.Policy)
			}
			if keeps {
				d.keeps = append(d.keeps, p.Policy)
			}
			if cheaper && keeps {
				d.dominates = append(d.dominates, p.Policy)
			}
		}
		out = append(out, d)
	}
	return out
}

// writeDominations writes, per window and engine, whether reika served
// every round without an overflow and whether a peer dominates it.
func writeDominations(w io.Writer, res *Results, bullet string) {
	for _, d := range dominations(res.Rows) {
		served := "served every round with 0 overflows"
		if d.reika.Served != d.reika.Rounds || d.reika.Overflows > 0 {
			served = fmt.Sprintf("served %s of the rounds with %s overflows a session", pct(d.reika.Served, d.reika.Rounds), num(d.reika.Overflows))
		}
		verdict := "no peer dominates reika"
		if len(d.dominates) > 0 {
			verdict = "dominated by " + names(d.dominates)
		}
		fmt.Fprintf(w, "%s%s, %s: reika %s; %s (peers serving ≥%.0f%% of the rounds: %s; cheaper beyond the intervals: %s; more verbatim beyond them: %s)\n",
			bullet, kTokens(d.window), d.engine, served, verdict, minServed*100, names(d.serving), names(d.cheaper), names(d.keeps))
	}
}

func names(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
