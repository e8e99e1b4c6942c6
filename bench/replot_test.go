package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMergeResults merges the results of two runs on other seeds: one run's
// sessions and runs, its rows aggregated over both; and refuses runs of
// other settings.
func TestMergeResults(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, seed int64, cost float64, slots int) string {
		res := Results{Command: "go run ./bench -seeds " + name, Slots: slots, GenWeight: 10, Windows: []int{16384}, Engines: []string{"chunk"},
			Seeds: []int64{seed}, Sessions: []SessInfo{{Seed: seed, Kind: KindSurvey, Rounds: 200}},
			Runs: []*Figures{{Policy: "reika", Window: 16384, Engine: "chunk", Seed: seed, Rounds: 200, Served: 200, Cost: cost, Verbatim: []float64{cost / 4}}}}
		res.Rows = aggregate(res.Runs, res.Windows, Engines[1:], []string{"reika"})
		js, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name+".json")
		if err := os.WriteFile(p, js, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b, c := write("2", 2, 1.2, 4), write("1", 1, 1.0, 4), write("3", 3, 1.0, 1)
	res, err := readResults(a + "," + b)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0].Sessions != 2 || res.Rows[0].Cost != 1.1 || res.Rows[0].Slots != 4 ||
		res.Runs[0].Seed != 1 || len(res.Sessions) != 2 || !strings.Contains(res.Command, " && ") {
		t.Errorf("merged: %+v, rows %+v", res, res.Rows)
	}
	if _, err := readResults(a + "," + c); err == nil {
		t.Error("runs with other slots merged")
	}
	if _, err := readResults(a + "," + a); err == nil {
		t.Error("one seed merged twice")
	}
}
