package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestDominations(t *testing.T) {
	row := func(p string, served int, cost, cLo, cHi, v, vLo, vHi float64) Row {
		return Row{Policy: p, Window: 16384, Engine: "chunk", Rounds: 100, Served: served,
			Cost: cost, CostCI95: [2]float64{cLo, cHi}, Verbatim: v, VerbatimCI95: [2]float64{vLo, vHi}}
	}
	rows := []Row{
		row("reika", 100, 1.2, 1.1, 1.3, 0.4, 0.35, 0.45),
		row("better", 98, 1.0, 0.9, 1.05, 0.6, 0.5, 0.7),   // both, beyond the intervals
		row("dies", 97, 0.5, 0.4, 0.6, 0.6, 0.5, 0.7),      // serves too few rounds
		row("cheap", 100, 1.0, 0.9, 1.05, 0.45, 0.4, 0.5),  // verbatim overlaps
		row("keeps", 100, 1.25, 1.15, 1.35, 0.6, 0.5, 0.7), // cost overlaps
	}
	ds := dominations(rows)
	if len(ds) != 1 {
		t.Fatalf("%d verdicts", len(ds))
	}
	d := ds[0]
	if !slices.Equal(d.dominates, []string{"better"}) || !slices.Equal(d.cheaper, []string{"better", "cheap"}) ||
		!slices.Equal(d.keeps, []string{"better", "keeps"}) || slices.Contains(d.serving, "dies") {
		t.Errorf("%+v", d)
	}
	var b bytes.Buffer
	writeDominations(&b, &Results{Rows: rows}, "- ")
	if got := b.String(); !strings.Contains(got, "16k, chunk: reika served every round with 0 overflows; dominated by better") {
		t.Errorf("%s", got)
	}
}
