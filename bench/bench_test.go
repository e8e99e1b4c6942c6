package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
)

func TestFigures(t *testing.T) {
	s := testSession() // 12 rounds
	ann := newAnnotations()
	rec := func(i int, kind string, round, prompt, cache int, overflow bool) enginetest.Recorded {
		ann.set(i, annotation{Kind: kind, Round: round})
		r := enginetest.Recorded{Index: i, Path: "/v1/chat/completions", Status: 200, PromptTokens: prompt, CacheN: cache,
			PromptN: prompt - cache, PromptMS: float64(prompt-cache) / 2, Overflowed: overflow}
		if overflow {
			r.Status, r.CacheN, r.PromptN, r.PromptMS = 400, 0, 0, 0
		}
		if kind != kindMain {
			r.CompletionTokens = 100
		}
		return r
	}
	recs := []enginetest.Recorded{
		{Index: -1, Path: "/v1/models", Status: 200},
		rec(0, kindMain, 0, 1000, 0, false),
		rec(1, kindMain, 1, 1500, 1200, false),    // append
		rec(2, kindSummary, 2, 2000, 1600, false), // append
		rec(3, kindMain, 2, 800, 300, false),      // invalidation
		rec(4, kindMain, 3, 9000, 0, true),        // refused
		rec(5, kindMain, 3, 8500, 700, false),     // retried: invalidation
	}
	f := figures("x", 8192, Engines[0], s, recs, ann)
	if f.Requests != 6 || f.Prefill != 1000+300+400+500+7800 || f.Invalidations != 2 || f.Overflows != 1 || f.FirstOverflow != 3 {
		t.Errorf("requests %d prefill %d invalidations %d overflows %d first %d", f.Requests, f.Prefill, f.Invalidations, f.Overflows, f.FirstOverflow)
	}
	if f.Served != 4 || f.PeakContext != 8500 || f.MeanContext != (1000+1500+800+8500)/4.0 {
		t.Errorf("served %d peak %d mean %.1f", f.Served, f.PeakContext, f.MeanContext)
	}
	if f.SummaryCalls != 1 || f.SummaryTokens != 100 || f.Context[2] != 800 || f.Context[4] != 0 {
		t.Errorf("summary calls %d tokens %d context %v", f.SummaryCalls, f.SummaryTokens, f.Context)
	}
	if want := (1000+300+400+500+7800)*0.5/1000 + 100*genMSPerToken/1000; f.EngineSeconds != want {
		t.Errorf("engine seconds %.3f, want %.3f", f.EngineSeconds, want)
	}

	// -dump: every request of the traced policy, a JSON line each.
	dumpDir, tracePolicy = t.TempDir(), "x"
	defer func() { dumpDir, tracePolicy = "", "" }()
	recs[1].Body = []byte(`{"messages":[{"role":"user","content":"hi"}]}`)
	figures("x", 8192, Engines[0], s, recs, ann)
	data, err := os.ReadFile(filepath.Join(dumpDir, "x-8k-"+Engines[0].Name+"-"+strconv.FormatInt(s.Seed, 10)+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var got []dumpLine
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var d dumpLine
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		got = append(got, d)
	}
	if len(got) != len(recs) || got[3].Kind != kindSummary || got[4].PromptN != 500 || got[4].CacheN != 300 || !strings.Contains(string(got[1].Body), `"hi"`) {
		t.Errorf("dumped %d lines, want %d, with each request's counts and body:\n%s", len(got), len(recs), data)
	}
}

// TestRun runs the whole bench on one short session at 16k: reika through
// the real agent loop and every peer, with what the report needs.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the agent for a whole session")
	}
	if _, err := loadSource(); err != nil {
		t.Skipf("no Go distribution to read: %v", err)
	}
	res, err := run(context.Background(), plan{windows: []int{16384}, seeds: []int64{2}, rounds: 40, specs: Policies, engines: Engines, jobs: 1}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(Engines) * (1 + len(Policies)); len(res.Runs) != n || len(res.Rows) != n {
		t.Fatalf("%d runs, %d rows", len(res.Runs), len(res.Rows))
	}
	// The engines differ in what they reuse, never in what the policies
	// decide: chunk reuse processes no more, and the requests are the same.
	byEngine := map[string]map[string]*Figures{}
	for _, f := range res.Runs {
		if byEngine[f.Policy] == nil {
			byEngine[f.Policy] = map[string]*Figures{}
		}
		byEngine[f.Policy][f.Engine] = f
	}
	for p, fs := range byEngine {
		prefix, chunk := fs["prefix"], fs["chunk"]
		if chunk.Prefill > prefix.Prefill || !slices.Equal(chunk.Context, prefix.Context) || !slices.Equal(chunk.Retention, prefix.Retention) {
			t.Errorf("%s: prefill %d with chunk reuse, %d without; context %v and %v; retention %v and %v", p, chunk.Prefill, prefix.Prefill,
				chunk.Context, prefix.Context, chunk.Retention, prefix.Retention)
		}
		for i, r := range prefix.Retention {
			if v := prefix.Verbatim[i]; r < 0 || r > 1 || v < 0 || v > 1 {
				t.Errorf("%s: retention %v, verbatim %v", p, prefix.Retention, prefix.Verbatim)
			}
		}
	}
	if r := byEngine["reika"]["chunk"]; r.Ratio >= byEngine["reika"]["prefix"].Ratio {
		t.Errorf("reika gains nothing from chunk reuse: %.2f× the lower bound with it, %.2f× without", r.Ratio, byEngine["reika"]["prefix"].Ratio)
	}
	rounds := res.Sessions[0].Rounds
	for _, f := range res.Runs {
		if f.Rounds != rounds || f.Served > rounds || f.Prefill <= 0 || f.LowerBound <= 0 || f.Ratio != float64(f.Prefill)/float64(f.LowerBound) {
			t.Errorf("%s: %+v", f.Policy, f)
		}
		if want := (float64(f.Prefill) + genWeight*float64(f.SummaryTokens)) / float64(f.LowerBound); f.Cost != want || f.SummaryTokens > 0 && f.Cost <= f.Ratio {
			t.Errorf("%s: cost %.3f, want %.3f (prefill %d, generated %d, lower bound %d)", f.Policy, f.Cost, want, f.Prefill, f.SummaryTokens, f.LowerBound)
		}
		if f.Overflows == 0 && f.Served != rounds {
			t.Errorf("%s: %d of %d rounds served without an overflow", f.Policy, f.Served, rounds)
		}
		for _, p := range f.Problems {
			t.Errorf("%s: %s", f.Policy, p)
		}
		switch f.Policy {
		case "reika":
			// ctxwin's shed cycle keeps every request within the window.
			if f.Overflows != 0 || f.Served != rounds || f.PeakContext >= 16384 {
				t.Errorf("reika: %d overflows, %d of %d served, peak %d", f.Overflows, f.Served, rounds, f.PeakContext)
			}
			if f.Sheds+f.Folds == 0 || f.Invalidations == 0 {
				t.Errorf("reika never shed or folded in %d rounds at 16k", rounds)
			}
		case "none":
			// Append-only: no invalidation, and no more than each token once.
			if f.Invalidations != 0 || f.Prefill > f.LowerBound {
				t.Errorf("none: %d invalidations, prefill %d above the lower bound %d", f.Invalidations, f.Prefill, f.LowerBound)
			}
		case "summarize83", "prune40k":
			if f.SummaryCalls == 0 {
				t.Errorf("%s made no summary call in %d rounds at 16k", f.Policy, rounds)
			}
		}
	}
	for _, r := range res.Rows {
		// One session: no interval; the row's figures are the session's.
		if f := byEngine[r.Policy][r.Engine]; r.Slots != slots || r.Cost != f.Cost || r.CostCI95 != [2]float64{f.Cost, f.Cost} ||
			r.Verbatim != mean(f.Verbatim) || r.VerbatimCI95 != [2]float64{r.Verbatim, r.Verbatim} {
			t.Errorf("%s on %s: slots %d cost %.3f %v verbatim %.3f %v; the session's cost %.3f, verbatim %v",
				r.Policy, r.Engine, r.Slots, r.Cost, r.CostCI95, r.Verbatim, r.VerbatimCI95, f.Cost, f.Verbatim)
		}
	}
	var out bytes.Buffer
	writeTable(&out, res)
	for _, p := range append([]string{"reika"}, policyNames()) {
		for _, name := range strings.Split(p, ", ") {
			if !strings.Contains(out.String(), name) {
				t.Errorf("the table lacks %s:\n%s", name, out.String())
			}
		}
	}
	dir := t.TempDir()
	if err := writeResults(dir, res, []int{16384}, Policies, Engines); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "context.svg"))
	if err != nil || !bytes.HasPrefix(svg, []byte("<svg")) || bytes.Count(svg, []byte("<polyline")) < len(Policies) {
		t.Errorf("context.svg: %v, %d lines", err, bytes.Count(svg, []byte("<polyline")))
	}
	js, err := os.ReadFile(filepath.Join(dir, "results.json"))
	var back Results
	if err != nil || json.Unmarshal(js, &back) != nil || len(back.Rows) != len(res.Rows) {
		t.Errorf("results.json does not read back: %v", err)
	}
	// -replot reports a run's results.json as the run did.
	again := t.TempDir()
	var table bytes.Buffer
	if err := replot(&table, filepath.Join(dir, "results.json"), false, again); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"results.md", "prefill.svg", "context.svg"} {
		a, _ := os.ReadFile(filepath.Join(dir, name))
		b, err := os.ReadFile(filepath.Join(again, name))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("-replot wrote another %s (%v)", name, err)
		}
	}
	if !strings.Contains(table.String(), out.String()) {
		t.Errorf("-replot's table differs:\n%s\nthe run's:\n%s", table.String(), out.String())
	}
	// A run says what the engines' host memory kept, which moves drop-half's
	// figures (README).
	if back.HostMemory != hostMemory || hostMemory == 0 || !strings.Contains(out.String(), "host memory keeps "+kTokens(hostMemory)+" tokens") {
		t.Errorf("host memory %d in results.json, %d in the run; table:\n%s", back.HostMemory, hostMemory, out.String())
	}
}
