package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// Row is one policy at one window on one engine, over every session.
type Row struct {
	Policy string `json:"policy"`
	Window int    `json:"window"`
	Engine string `json:"engine"`
	// Slots is the engine's slots (-np), every request routed among them
	// as llama-server does.
	Slots int `json:"slots"`
	// Sessions is how many sessions (seeds) the row sums.
	Sessions int `json:"sessions"`
	Rounds   int `json:"rounds"` // Σ rounds
	Served   int `json:"served"` // Σ rounds answered
	// Cost is the mean over the sessions of each session's cost (Figures'
	// Cost: prefill and context management's generated tokens at the run's
	// generation weight, over the lower bound); Verbatim the mean over the
	// sessions of each session's mean verbatim retention over its tasks.
	// The CI95s are their 95% t-intervals over the sessions (stats.go).
	Cost         float64    `json:"cost"`
	CostCI95     [2]float64 `json:"cost_ci95"`
	Verbatim     float64    `json:"verbatim"`
	VerbatimCI95 [2]float64 `json:"verbatim_ci95"`
	// Prefill and LowerBound are per session, means over the sessions;
	// Ratio is Σ prefill / Σ lower bound.
	Prefill    float64 `json:"prefill"`
	LowerBound float64 `json:"lowerBound"`
	Ratio      float64 `json:"ratio"`
	// Invalidations, Overflows, SummaryCalls and CutReplies are per
	// session, means over the sessions.
	Invalidations float64 `json:"invalidations"`
	Overflows     float64 `json:"overflows"`
	SummaryCalls  float64 `json:"summaryCalls"`
	SummaryTokens float64 `json:"summaryTokens"`
	CutReplies    float64 `json:"cutReplies"`
	EngineSeconds float64 `json:"engineSeconds"`
	// PeakContext is the largest over the sessions; MeanContext the mean
	// over every served round.
	PeakContext int     `json:"peakContext"`
	MeanContext float64 `json:"meanContext"`
	// FirstOverflow is the earliest round that overflowed, -1 for none.
	FirstOverflow int `json:"firstOverflowRound"`
	// Retention is the mean over every task of the share of the facts its
	// answer uses still in view (retention.go).
	Retention float64 `json:"retention"`
	// Shrinks counts reika's shrinks over the sessions; ShrinkMin and
	// ShrinkMedian are the least and the median size of the request a
	// shrink replaced, by the engine's count, as a share of the shed point.
	Shrinks      int     `json:"shrinks,omitempty"`
	ShrinkMin    float64 `json:"shrinkMin,omitempty"`
	ShrinkMedian float64 `json:"shrinkMedian,omitempty"`
}

// Results is everything a bench run measured.
type Results struct {
	Command string `json:"command"`
	// HostMemory is the tokens of earlier prompts the engines' host memory
	// kept (-host-memory; 0: none).
	HostMemory int `json:"hostMemory"`
	// Slots is the engines' slots; GenWeight the prefill tokens one
	// generated token of context management counts as in cost.
	Slots     int        `json:"slots"`
	GenWeight float64    `json:"genWeight"`
	Windows   []int      `json:"windows"`
	Engines   []string   `json:"engines"`
	Seeds     []int64    `json:"seeds"`
	Sessions  []SessInfo `json:"sessions"`
	Rows      []Row      `json:"rows"`
	Runs      []*Figures `json:"runs"`
}

// SessInfo describes one generated session.
type SessInfo struct {
	Seed          int64          `json:"seed"`
	Kind          string         `json:"kind"`
	Turns         int            `json:"turns"`
	TurnRounds    []int          `json:"turnRounds"`
	Rounds        int            `json:"rounds"`
	ToolCalls     map[string]int `json:"toolCalls"`
	OutputTokens  int            `json:"outputTokens"`
	MedianOutput  int            `json:"medianOutputTokens"`
	P90Output     int            `json:"p90OutputTokens"`
	MaxOutput     int            `json:"maxOutputTokens"`
	ReplyTokens   int            `json:"replyTokens"` // content and reasoning of every reply
	AnswerTokens  int            `json:"answerTokens"`
	ToolCallCount int            `json:"toolCallCount"`
}

// aggregate sums the runs into rows, in the order of windows, engines and
// policies.
func aggregate(runs []*Figures, windows []int, engines []engineSpec, policies []string) []Row {
	var rows []Row
	for _, w := range windows {
		for _, e := range engines {
			for _, p := range policies {
				var mine []*Figures
				for _, f := range runs {
					if f.Window == w && f.Policy == p && f.Engine == e.Name {
						mine = append(mine, f)
					}
				}
				if len(mine) > 0 {
					rows = append(rows, rowOf(p, w, e.Name, mine))
				}
			}
		}
	}
	return rows
}

// rowOf sums one policy's runs at one window on one engine.
func rowOf(policy string, window int, engine string, runs []*Figures) Row {
	r := Row{Policy: policy, Window: window, Engine: engine, FirstOverflow: -1, Slots: slots}
	var prefill, lb, served, ctxSum, retained float64
	var shares, costs, verbatim []float64
	tasks := 0
	for _, f := range runs {
		r.Sessions++
		costs = append(costs, f.Cost)
		verbatim = append(verbatim, mean(f.Verbatim))
		r.Rounds += f.Rounds
		r.Served += f.Served
		prefill += float64(f.Prefill)
		lb += float64(f.LowerBound)
		r.Invalidations += float64(f.Invalidations)
		r.Overflows += float64(f.Overflows)
		r.SummaryCalls += float64(f.SummaryCalls)
		r.SummaryTokens += float64(f.SummaryTokens)
		r.EngineSeconds += f.EngineSeconds
		r.CutReplies += float64(f.CutReplies)
		r.PeakContext = max(r.PeakContext, f.PeakContext)
		served += float64(f.Served)
		shares = append(shares, f.ShrinkAt...)
		ctxSum += f.MeanContext * float64(f.Served)
		for _, x := range f.Retention {
			retained += x
			tasks++
		}
		if f.FirstOverflow >= 0 && (r.FirstOverflow < 0 || f.FirstOverflow < r.FirstOverflow) {
			r.FirstOverflow = f.FirstOverflow
		}
	}
	n := float64(r.Sessions)
	r.Cost, r.CostCI95 = meanCI(costs)
	r.Verbatim, r.VerbatimCI95 = meanCI(verbatim)
	r.Prefill, r.LowerBound = prefill/n, lb/n
	if lb > 0 {
		r.Ratio = prefill / lb
	}
	r.Invalidations /= n
	r.Overflows /= n
	r.SummaryCalls /= n
	r.SummaryTokens /= n
	r.EngineSeconds /= n
	r.CutReplies /= n
	if served > 0 {
		r.MeanContext = ctxSum / served
	}
	if tasks > 0 {
		r.Retention = retained / float64(tasks)
	}
	if len(shares) > 0 {
		sort.Float64s(shares)
		r.Shrinks, r.ShrinkMin, r.ShrinkMedian = len(shares), shares[0], shares[len(shares)/2]
	}
	return r
}

// writeTable writes the rows as a text table, one block per window and
// engine.
func writeTable(w io.Writer, res *Results) {
	fmt.Fprintf(w, "%d sessions (seeds %s; %s), %s rounds each; figures per session, means over the sessions, [95%% t-intervals]\n",
		len(res.Seeds), joinSeeds(res.Seeds), kindCounts(res.Sessions), roundsRange(res.Sessions))
	fmt.Fprintf(w, "%d slots; the engines' host memory keeps %s tokens of earlier prompts; cost counts a generated token as %g prefilled\n",
		res.Slots, kTokens(res.HostMemory), res.GenWeight)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "window\tengine\tpolicy\tcost\t95%\tverbatim\t95%\tretention\tprefill\t× lower bound\tengine s\tinvalidations\toverflows\tfirst overflow\tserved\tpeak ctx\tmean ctx\tsummary calls\tsummary out\tcut replies\t")
	last := ""
	for _, r := range res.Rows {
		if key := fmt.Sprint(r.Window, r.Engine); key != last && last != "" {
			fmt.Fprintln(tw, strings.Repeat("\t", 20))
		}
		last = fmt.Sprint(r.Window, r.Engine)
		first := "–"
		if r.FirstOverflow >= 0 {
			first = fmt.Sprintf("round %d", r.FirstOverflow+1)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%s\t%.1f%%\t%s\t%.0f%%\t%s\t%.2f\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", kTokens(r.Window), r.Engine, r.Policy,
			r.Cost, ratioCI(r.CostCI95), r.Verbatim*100, pctCI(r.VerbatimCI95), r.Retention*100,
			kTokens(int(r.Prefill+0.5)), r.Ratio, r.EngineSeconds, num(r.Invalidations), num(r.Overflows), first,
			pct(r.Served, r.Rounds), kTokens(r.PeakContext), kTokens(int(r.MeanContext+0.5)), num(r.SummaryCalls),
			kTokens(int(r.SummaryTokens+0.5)), num(r.CutReplies))
	}
	tw.Flush()
	for _, r := range res.Rows {
		if r.Shrinks > 0 {
			fmt.Fprintf(w, "%s at %s on %s: %d shrinks; the request each replaced was, by the engine's count, at least %.0f%% of the shed point (median %.0f%%)\n",
				r.Policy, kTokens(r.Window), r.Engine, r.Shrinks, r.ShrinkMin*100, r.ShrinkMedian*100)
		}
	}
	writeDominations(w, res, "")
}

// ratioCI prints an interval of costs, "1.02–1.10".
func ratioCI(ci [2]float64) string { return fmt.Sprintf("%.2f–%.2f", ci[0], ci[1]) }

// pctCI prints an interval of shares as percentages, "41–46%".
func pctCI(ci [2]float64) string { return fmt.Sprintf("%.0f–%.0f%%", ci[0]*100, ci[1]*100) }

// writeMarkdown writes the rows as a Markdown table for the README: per
// window and policy, the cost on each engine with its interval beside
// what the policy keeps in view, which the engine does not change.
func writeMarkdown(w io.Writer, res *Results) {
	fmt.Fprintln(w, "| window | policy | verbatim | cost, prefix only | cost, chunk reuse | retention (lenient) | prefill × (prefix / chunk) | overflows | rounds served | mean ctx | summary calls (tokens out) |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, r := range res.Rows {
		if r.Engine != res.Engines[0] {
			continue
		}
		chunk := r
		for _, c := range res.Rows {
			if c.Window == r.Window && c.Policy == r.Policy && c.Engine != r.Engine {
				chunk = c
			}
		}
		name := r.Policy
		if name == "reika" {
			name = "**reika**"
		}
		fmt.Fprintf(w, "| %s | %s | %.0f%% (%s) | %.2f (%s) | %.2f (%s) | %.0f%% | %.2f / %.2f | %s | %s | %s | %s (%s) |\n", kTokens(r.Window), name,
			r.Verbatim*100, pctCI(r.VerbatimCI95), r.Cost, ratioCI(r.CostCI95), chunk.Cost, ratioCI(chunk.CostCI95), r.Retention*100,
			r.Ratio, chunk.Ratio, num(r.Overflows), pct(r.Served, r.Rounds), kTokens(int(r.MeanContext+0.5)),
			num(r.SummaryCalls), kTokens(int(r.SummaryTokens+0.5)))
	}
	fmt.Fprintln(w)
	writeDominations(w, res, "- ")
}

// duration prints seconds as 3m25s.
func duration(sec float64) string {
	s := int(sec + 0.5)
	if s < 60 {
		return fmt.Sprintf("%ds", s)
	}
	return fmt.Sprintf("%dm%02ds", s/60, s%60)
}

// kTokens prints a token count: 16384 → 16k, 12345 → 12.3k, 980 → 980.
func kTokens(n int) string {
	switch {
	case n >= 1024*1024 && n%(1024*1024) == 0:
		return fmt.Sprintf("%dM", n/(1024*1024))
	case n >= 1024 && n%1024 == 0 && n <= 1<<20:
		return fmt.Sprintf("%dk", n/1024)
	case n >= 100_000:
		return fmt.Sprintf("%dk", (n+500)/1000)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprint(n)
}

func num(x float64) string {
	if x == float64(int(x)) {
		return fmt.Sprint(int(x))
	}
	return fmt.Sprintf("%.1f", x)
}

func pct(a, b int) string {
	if b == 0 {
		return "–"
	}
	if a == b {
		return "100%"
	}
	return fmt.Sprintf("%d%%", 100*a/b) // floored: 100% only when all
}

func joinSeeds(s []int64) string {
	var out []string
	for _, x := range s {
		out = append(out, fmt.Sprint(x))
	}
	return strings.Join(out, ", ")
}

func roundsRange(ss []SessInfo) string {
	if len(ss) == 0 {
		return "0"
	}
	lo, hi := ss[0].Rounds, ss[0].Rounds
	for _, s := range ss {
		lo, hi = min(lo, s.Rounds), max(hi, s.Rounds)
	}
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

// describe summarizes a session for the report, counting tokens with tok.
func describe(s *Session, tok func(string) int) SessInfo {
	info := SessInfo{Seed: s.Seed, Kind: s.Kind, Turns: len(s.Turns), Rounds: s.Rounds(), ToolCalls: map[string]int{}}
	var outs []int
	for _, t := range s.Turns {
		info.TurnRounds = append(info.TurnRounds, len(t.Steps))
		for _, st := range t.Steps {
			info.ReplyTokens += tok(st.Content) + tok(st.Reasoning)
			if len(st.Calls) == 0 {
				info.AnswerTokens += tok(st.Content)
			}
			for i, c := range st.Calls {
				info.ToolCalls[c.Name]++
				info.ToolCallCount++
				n := tok(st.Outputs[i])
				outs = append(outs, n)
				info.OutputTokens += n
			}
		}
	}
	sort.Ints(outs)
	if len(outs) > 0 {
		info.MedianOutput = outs[len(outs)/2]
		info.P90Output = outs[len(outs)*9/10]
		info.MaxOutput = outs[len(outs)-1]
	}
	return info
}

// kindCounts says how many sessions of each kind there are.
func kindCounts(ss []SessInfo) string {
	n := map[string]int{}
	for _, s := range ss {
		n[s.Kind]++
	}
	var out []string
	for _, k := range Kinds {
		if n[k] > 0 {
			out = append(out, fmt.Sprintf("%d %s", n[k], k))
		}
	}
	return strings.Join(out, ", ")
}
