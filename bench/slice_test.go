package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
)

// committedResults is the committed run's results.json (README: Results).
const committedResults = "results/results.json"

// TestCommittedSlice reruns a slice of the committed run: one bug-fix
// session at the smallest window on the chunk-reuse engine, reika and
// drop-half, and checks that the session and every figure of both runs are
// the committed ones exactly. It fails when the code and the committed
// results disagree: regenerate them (bench/README.md, Results). The
// sessions are written from the Go distribution's sources, so it holds
// for the Go release of go.mod's toolchain.
func TestCommittedSlice(t *testing.T) {
	if testing.Short() {
		t.Skip("the committed figures are not checked under -short (the inner loop): ./test.sh checks them")
	}
	data, err := os.ReadFile(committedResults)
	if err != nil {
		t.Fatal(err)
	}
	var res Results
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("%s: %v", committedResults, err)
	}
	if strings.Contains(res.Command, "-rounds") || len(res.Windows) == 0 || !slices.Contains(res.Engines, "chunk") {
		t.Fatalf("the committed run (%s) is not one this test can slice: default -rounds, the chunk engine", res.Command)
	}
	var info SessInfo
	for _, s := range res.Sessions {
		if s.Kind == KindBugfix && (info.Seed == 0 || s.Rounds < info.Rounds) {
			info = s
		}
	}
	if info.Seed == 0 {
		t.Fatalf("the committed run has no %s session", KindBugfix)
	}
	defer func(s, h int, w float64) { slots, hostMemory, genWeight = s, h, w }(slots, hostMemory, genWeight)
	slots, hostMemory, genWeight = res.Slots, res.HostMemory, res.GenWeight
	src, err := loadSource()
	if err != nil {
		t.Fatal(err)
	}
	s, err := GenerateKind(src, t.TempDir(), info.Seed, 200, info.Kind)
	if err != nil {
		t.Fatal(err)
	}
	tok := enginetest.New(enginetest.Options{})
	defer tok.Close()
	if got, want := jsonOf(t, describe(s, tok.Tokens)), jsonOf(t, info); got != want {
		t.Fatalf("session %d is not the committed one:\n%s\ncommitted:\n%s", info.Seed, got, want)
	}
	engs, _ := pickEngines("chunk")
	specs, _ := pickPolicies("drophalf")
	window := res.Windows[0]
	// The workspace's path is in reika's system message: the run's
	// directory must be as long as the bench's (benchDir, run) to send the
	// same tokens, and the committed run's temporary directory was /tmp.
	t.Setenv("TMPDIR", "/tmp")
	tmp, err := benchDir()
	if err != nil {
		t.Fatal(err)
	}
	defer removeAll(tmp)
	dir := filepath.Join(tmp, fmt.Sprintf("run-%d-%d", s.Seed, window))
	figs, err := runOne(context.Background(), src, s, window, plan{specs: specs, engines: engs}, dir, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range figs {
		i := slices.IndexFunc(res.Runs, func(c *Figures) bool {
			return c.Policy == f.Policy && c.Window == f.Window && c.Engine == f.Engine && c.Seed == f.Seed
		})
		if i < 0 {
			t.Errorf("the committed run lacks %s at %d on %s, session %d", f.Policy, f.Window, f.Engine, f.Seed)
			continue
		}
		if got, want := jsonOf(t, f), jsonOf(t, res.Runs[i]); got != want {
			t.Errorf("%s, session %d at %s on %s: the figures differ from the committed ones (regenerate bench/results: bench/README.md)\n got %s\nwant %s",
				f.Policy, f.Seed, kTokens(window), f.Engine, got, want)
		}
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
