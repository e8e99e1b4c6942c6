// Command bench measures the prefill cost of context management: it
// replays the same sessions through reika's real agent loop and through
// models of its peers' policies, against a fake llama.cpp engine whose
// prefix cache counts the prompt tokens each request reprocesses, and
// reports prefill, cache invalidations, overflows and the context the
// model keeps, per policy and window.
//
//	go run ./bench                      # the table, 3 sessions × 16k, 32k, 128k
//	go run ./bench -json                # the figures as JSON
//	go run ./bench -out bench/results   # also write results.txt, results.json, results.md, context.svg
//
// See bench/README.md for what is measured and how.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
)

// unbounded is the window of the lower-bound run: no session fills it.
const unbounded = 1 << 30

func main() {
	var (
		windowsFlag  = flag.String("windows", "16k,32k,128k", "context windows, comma-separated (16k = 16384 tokens)")
		seedsFlag    = flag.String("seeds", "1,2,3", "session seeds, comma-separated, ranges like 10..18, or a count n for seeds 1..n")
		sessionsFlag = flag.Int("sessions", 0, "run seeds 1..n (instead of -seeds)")
		rounds       = flag.Int("rounds", 200, "least rounds per session")
		policiesFlag = flag.String("policies", "all", "peer policies to compare with reika, comma-separated: "+policyNames())
		jsonOut      = flag.Bool("json", false, "print the figures as JSON instead of the table")
		out          = flag.String("out", "", "also write results.txt, results.json, results.md, context.svg and prefill.svg to this directory")
		jobs         = flag.Int("j", runtime.GOMAXPROCS(0), "sessions × windows run at once")
		verbose      = flag.Bool("v", false, "log each run to stderr")
		trace        = flag.String("trace", "", "print every request of this policy's runs to stderr (reika, none, ...)")
		dumpFlag     = flag.String("dump", "", "with -trace, also write every request of that policy's runs and of the lower bound to this directory, a JSON line each")
		enginesFlag  = flag.String("engines", "prefix,chunk", "engines to run every policy on: "+engineNames())
		kindsFlag    = flag.String("kinds", strings.Join(Kinds, ","), "session kinds, taken in turn by the seeds (seed 1 the first): "+strings.Join(Kinds, ", "))
		hostFlag     = flag.String("host-memory", "64k", "tokens of earlier prompts the engine's host memory keeps (--cache-ram; 64k: 8 GiB of an 8B model's f16 KV cache); 0 turns it off")
	)
	flag.IntVar(&slots, "slots", slots, "the engine's slots (llama-server's -np)")
	flag.Float64Var(&genWeight, "gen-weight", genWeight, "prefilled tokens one generated token of context management (a note, a summary) counts as in cost")
	replotFlag := flag.String("replot", "", "report the results.json of an earlier run with this code's tables and plots, instead of running")
	flag.Usage = usage
	flag.Parse()
	if flag.NArg() > 0 {
		fail("unexpected arguments: %s", strings.Join(flag.Args(), " "))
	}
	if *replotFlag != "" {
		if err := replot(os.Stdout, *replotFlag, *jsonOut, *out); err != nil {
			fail("-replot: %v", err)
		}
		return
	}
	windows, err := parseWindows(*windowsFlag)
	if err != nil {
		fail("-windows: %v", err)
	}
	if hostMemory, err = parseTokens(*hostFlag); err != nil {
		fail("-host-memory: %v", err)
	}
	seeds, err := parseSeeds(*seedsFlag)
	if *sessionsFlag > 0 {
		seeds, err = parseSeeds(fmt.Sprintf("1..%d", *sessionsFlag))
	}
	if err != nil {
		fail("-seeds: %v", err)
	}
	specs, err := pickPolicies(*policiesFlag)
	if err != nil {
		fail("-policies: %v", err)
	}
	engs, err := pickEngines(*enginesFlag)
	if err != nil {
		fail("-engines: %v", err)
	}
	kinds, err := pickKinds(*kindsFlag)
	if err != nil {
		fail("-kinds: %v", err)
	}
	if *rounds < 1 || *jobs < 1 || slots < 1 || genWeight < 0 {
		fail("-rounds, -j and -slots must be at least 1, -gen-weight at least 0")
	}
	setTrace(*trace, *dumpFlag)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	logf := func(format string, args ...any) {
		if *verbose {
			fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
		}
	}
	start := time.Now()
	res, err := run(ctx, plan{windows: windows, seeds: seeds, kinds: kinds, rounds: *rounds, specs: specs, engines: engs, jobs: *jobs}, logf)
	if err != nil {
		fail("%v", err)
	}
	res.Command = commandLine()
	logf("done in %s", time.Since(start).Round(time.Second))
	if err := report(os.Stdout, res, *jsonOut, *out, specs, engs); err != nil {
		fail("%v", err)
	}
}

func usage() {
	fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./bench [flags]\n\n")
	flag.PrintDefaults()
}

// setTrace takes up -trace and -dump.
func setTrace(policy, dir string) {
	if policy != "" {
		traceTo, tracePolicy = os.Stderr, policy
	}
	if dir != "" {
		if policy == "" {
			fail("-dump needs -trace POLICY")
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fail("-dump: %v", err)
		}
		dumpDir = dir
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	os.Exit(1)
}

func commandLine() string {
	args := []string{"go", "run", "./bench"}
	return strings.Join(append(args, os.Args[1:]...), " ")
}

// engineSpec is an engine the bench runs every policy on: the fake
// llama-server, its cache as the real one's (agent/enginetest).
type engineSpec struct {
	Name  string // the flag's word
	Label string // the table's
	// Options sets what makes the engine this one.
	Options func(*enginetest.Options)
}

// benchCacheReuse is the chunk-reuse engine's --cache-reuse: the chunk size
// of issue 14's measurements on a real llama-server.
const benchCacheReuse = 64

// Engines are the engines a run can use. The peers send no n_cache_reuse
// of their own: on the chunk-reuse engine the server's --cache-reuse
// applies to their requests, as a llama-server started with it applies it
// to every request. Reika sends its own, as it does by default (cacheReuse
// auto: engine.DefaultCacheReuse), which overrides the server's. On the
// prefix-only engine the model cannot shift, and nothing is reused past
// the common prefix whatever is sent.
var Engines = []engineSpec{
	{Name: "prefix", Label: "prefix only", Options: func(o *enginetest.Options) { o.NoShift = true; hostOptions(o) }},
	{Name: "chunk", Label: "chunk reuse", Options: func(o *enginetest.Options) { o.CacheReuse = benchCacheReuse; hostOptions(o) }},
}

// hostMemory is what the engine's host memory keeps of earlier prompts, in
// tokens (-host-memory; 0: none). The default is llama-server's default
// --cache-ram, 8 GiB, of a model whose KV cache takes 128 KiB a token
// (f16, 32 layers, 8 KV heads of 128: an 8B model of the Llama 3 class).
var hostMemory = 8 << 30 / (128 << 10)

// slots is the engines' slots (-slots): llama-server's default -np is 4.
var slots = 4

func hostOptions(o *enginetest.Options) {
	o.Slots = slots
	o.HostCacheTokens = hostMemory
	o.NoHostCache = hostMemory == 0
}

func engineNames() string { return joinNames(Engines, func(e engineSpec) string { return e.Name }) }

func pickEngines(s string) ([]engineSpec, error) {
	return pickNamed(s, Engines, func(e engineSpec) string { return e.Name }, "engine", "engines")
}

func policyNames() string { return joinNames(Policies, func(p PolicySpec) string { return p.Name }) }

// pickKinds picks the session kinds of s, comma-separated.
func pickKinds(s string) ([]string, error) {
	return pickNamed(s, Kinds, func(k string) string { return k }, "session kind", "kinds")
}

// pickPolicies picks the peer policies of s; "all" or "" is every one, and
// "reika" (always run) is allowed and picks none.
func pickPolicies(s string) ([]PolicySpec, error) {
	if s == "all" || s == "" {
		return Policies, nil
	}
	return pickNamed(s, Policies, func(p PolicySpec) string { return p.Name }, "policy", "policies", "reika")
}

// joinNames is the names of all, comma-separated.
func joinNames[T any](all []T, name func(T) string) string {
	var names []string
	for _, x := range all {
		names = append(names, name(x))
	}
	return strings.Join(names, ", ")
}

// pickNamed is the elements of all named in the comma-separated s, in the
// order s names them. A name in allowed picks nothing and is no error; any
// other unknown name is an error that lists the kind's names.
func pickNamed[T any](s string, all []T, name func(T) string, kind, kinds string, allowed ...string) ([]T, error) {
	var out []T
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		found := false
		for _, x := range all {
			if name(x) == n {
				out = append(out, x)
				found = true
			}
		}
		if !found && !slices.Contains(allowed, n) {
			return nil, fmt.Errorf("unknown %s %q (the %s are %s)", kind, n, kinds, joinNames(all, name))
		}
	}
	return out, nil
}

// parseWindows reads "16k,32k,128k" (k = 1024) or plain token counts.
func parseWindows(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := parseTokens(f)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("%q is not a window size (like 16k or 16384)", strings.TrimSpace(f))
		}
		if n < 4096 {
			return nil, fmt.Errorf("a window of %d tokens is too small for the agent's fixed prefix", n)
		}
		out = append(out, n)
	}
	sort.Ints(out)
	return out, nil
}

// parseTokens reads a count of tokens, "64k" (k = 1024) or "65536".
func parseTokens(s string) (int, error) {
	f := strings.ToLower(strings.TrimSpace(s))
	mult := 1
	if strings.HasSuffix(f, "k") {
		f, mult = strings.TrimSuffix(f, "k"), 1024
	}
	n, err := strconv.Atoi(f)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a count of tokens (like 64k or 65536)", s)
	}
	return n * mult, nil
}

func parseSeeds(s string) ([]int64, error) {
	if !strings.Contains(s, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n > 0 && n <= 100 {
			var out []int64
			for i := 1; i <= n; i++ {
				out = append(out, int64(i))
			}
			return out, nil
		}
	}
	var out []int64
	for _, f := range strings.Split(s, ",") {
		if a, b, ok := strings.Cut(strings.TrimSpace(f), ".."); ok {
			lo, err1 := strconv.ParseInt(a, 10, 64)
			hi, err2 := strconv.ParseInt(b, 10, 64)
			if err1 != nil || err2 != nil || hi < lo || hi-lo >= 1000 {
				return nil, fmt.Errorf("%q is not a range of seeds (like 1..36)", f)
			}
			for n := lo; n <= hi; n++ {
				out = append(out, n)
			}
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a seed", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// plan is what a bench run runs.
type plan struct {
	windows []int
	seeds   []int64
	kinds   []string // the seeds' session kinds, in turn (kindOf); nil: Kinds
	rounds  int
	specs   []PolicySpec
	engines []engineSpec
	jobs    int
}

// benchDir makes the bench's temporary directory. Its path is in reika's
// system message, so its length is always the same: os.MkdirTemp's random
// part varies in length, and with it the token counts of every request.
func benchDir() (string, error) {
	for {
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("reika-bench-%010d", rand.Uint32()))
		err := os.Mkdir(dir, 0o700)
		if !errors.Is(err, fs.ErrExist) {
			return dir, err
		}
	}
}

// run generates the sessions and runs every policy on each at each window,
// on each engine.
func run(ctx context.Context, p plan, logf func(string, ...any)) (*Results, error) {
	src, err := loadSource()
	if err != nil {
		return nil, err
	}
	tmp, err := benchDir()
	if err != nil {
		return nil, err
	}
	defer removeAll(tmp)

	res := &Results{HostMemory: hostMemory, Slots: slots, GenWeight: genWeight, Windows: p.windows, Seeds: p.seeds}
	for _, e := range p.engines {
		res.Engines = append(res.Engines, e.Name)
	}
	sessions := map[int64]*Session{}
	tok := enginetest.New(enginetest.Options{})
	defer tok.Close()
	for _, seed := range p.seeds {
		kinds := p.kinds
		if kinds == nil {
			kinds = Kinds
		}
		s, err := GenerateKind(src, filepath.Join(tmp, fmt.Sprintf("gen-%d", seed)), seed, p.rounds, kindOf(seed, kinds))
		if err != nil {
			return nil, fmt.Errorf("session %d: %w", seed, err)
		}
		sessions[seed] = s
		res.Sessions = append(res.Sessions, describe(s, tok.Tokens))
		logf("session %d (%s): %d turns, %d rounds", seed, s.Kind, len(s.Turns), s.Rounds())
	}
	runs, err := runJobs(ctx, p, func(seed int64, window int) ([]*Figures, error) {
		return runOne(ctx, src, sessions[seed], window, p, filepath.Join(tmp, fmt.Sprintf("run-%d-%d", seed, window)), logf)
	})
	if err != nil {
		return nil, err
	}
	res.Runs = runs
	sort.SliceStable(res.Runs, func(i, k int) bool {
		a, b := res.Runs[i], res.Runs[k]
		if a.Window != b.Window {
			return a.Window < b.Window
		}
		return a.Seed < b.Seed
	})
	names := []string{"reika"}
	for _, s := range p.specs {
		names = append(names, s.Name)
	}
	res.Rows = aggregate(res.Runs, p.windows, p.engines, names)
	return res, nil
}

// runJobs runs one job per session and window, p.jobs at once, and
// gathers their figures.
func runJobs(ctx context.Context, p plan, one func(seed int64, window int) ([]*Figures, error)) ([]*Figures, error) {
	type job struct {
		seed   int64
		window int
	}
	var (
		mu    sync.Mutex
		first error
		out   []*Figures
		wg    sync.WaitGroup
	)
	queue := make(chan job)
	for range p.jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range queue {
				figs, err := one(j.seed, j.window)
				mu.Lock()
				if err != nil && first == nil {
					first = fmt.Errorf("session %d at %s: %w", j.seed, kTokens(j.window), err)
				}
				out = append(out, figs...)
				mu.Unlock()
			}
		}()
	}
	for _, seed := range p.seeds {
		for _, w := range p.windows {
			select {
			case queue <- job{seed, w}:
			case <-ctx.Done():
			}
		}
	}
	close(queue)
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return out, ctx.Err()
}

// lowerBoundName is the policy name of the lower-bound run.
const lowerBoundName = "lower bound"

// runOne runs reika and the peers on one session at one window on each
// engine, and the lower bound.
func runOne(ctx context.Context, src *source, s *Session, window int, p plan, dir string,
	logf func(string, ...any)) ([]*Figures, error) {
	defer removeAll(dir)
	var figs []*Figures
	var base *reikaRun
	for e, eng := range p.engines {
		// The workspace's path is in reika's system message: one of the
		// same length on every engine keeps the requests the same.
		sub := func(name string) string { return filepath.Join(dir, fmt.Sprintf("%s-e%d", name, e)) }
		t0 := time.Now()
		r, err := runReika(ctx, src, s, window, eng, sub("reika"))
		if err != nil {
			return nil, fmt.Errorf("reika on %s: %w", eng.Name, err)
		}
		logf("session %d, %s, %s: reika in %s", s.Seed, kTokens(window), eng.Name, time.Since(t0).Round(time.Millisecond))
		base = r
		figs = append(figs, r.figures)
		for _, spec := range p.specs {
			t0 := time.Now()
			f, err := runPeer(ctx, s, spec, window, eng, base, sub(spec.Name))
			if err != nil {
				return nil, err
			}
			logf("session %d, %s, %s: %s in %s", s.Seed, kTokens(window), eng.Name, spec.Name, time.Since(t0).Round(time.Millisecond))
			figs = append(figs, f)
		}
	}
	lb, err := runPeer(ctx, s, PolicySpec{Name: lowerBoundName, New: func() Policy { return &nonePolicy{} }}, unbounded, p.engines[0], base,
		filepath.Join(dir, "lower"))
	if err != nil {
		return nil, err
	}
	if lb.Overflows > 0 || lb.Served != lb.Rounds {
		return nil, fmt.Errorf("the lower-bound run did not serve every round")
	}
	for _, f := range figs {
		f.LowerBound = lb.Prefill
		if lb.Prefill > 0 {
			f.Ratio = float64(f.Prefill) / float64(lb.Prefill)
			f.Cost = (float64(f.Prefill) + genWeight*float64(f.SummaryTokens)) / float64(lb.Prefill)
		}
	}
	return figs, nil
}

// writeProblems lists what went wrong in the runs, if anything.
func writeProblems(w io.Writer, res *Results) {
	for _, f := range res.Runs {
		for _, p := range f.Problems {
			fmt.Fprintf(w, "note: %s, %s, session %d: %s\n", f.Policy, kTokens(f.Window), f.Seed, p)
		}
	}
}

// numberArrays are arrays of integers as MarshalIndent spreads them, one
// number a line; results.json keeps each on one line.
var (
	numberArrays = regexp.MustCompile(`\[\s*-?\d+(?:,\s*-?\d+)*\s*\]`)
	spaces       = regexp.MustCompile(`\s+`)
)

// marshalResults is the JSON of res, indented, with each array of numbers
// on one line.
func marshalResults(res *Results) ([]byte, error) {
	js, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return nil, err
	}
	js = numberArrays.ReplaceAllFunc(js, func(m []byte) []byte { return spaces.ReplaceAll(m, nil) })
	return append(js, '\n'), nil
}

// writeResults writes the table, the figures, the README table and the
// plots (the context of the first session over its rounds; the prefill
// ratios) to dir.
func writeResults(dir string, res *Results, windows []int, specs []PolicySpec, engines []engineSpec) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var txt strings.Builder
	fmt.Fprintf(&txt, "$ %s\n", res.Command)
	writeTable(&txt, res)
	writeProblems(&txt, res)
	var md strings.Builder
	writeMarkdown(&md, res)
	js, err := marshalResults(res)
	if err != nil {
		return err
	}
	names := []string{"reika"}
	for _, p := range specs {
		names = append(names, p.Name)
	}
	var svg strings.Builder
	seed := res.Seeds[0]
	var starts []int
	for _, s := range res.Sessions {
		if s.Seed == seed {
			n := 0
			for _, r := range s.TurnRounds {
				starts = append(starts, n)
				n += r
			}
		}
	}
	var first []*Figures // the context in view does not depend on the engine
	for _, f := range res.Runs {
		if f.Engine == engines[0].Name {
			first = append(first, f)
		}
	}
	writeSVG(&svg, first, seed, windows, names, starts)
	var bars strings.Builder
	writeBars(&bars, res.Rows, windows, names, engines)
	for name, data := range map[string]string{
		"results.txt":  txt.String(),
		"results.md":   md.String(),
		"results.json": string(js),
		"context.svg":  svg.String(),
		"prefill.svg":  bars.String(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			return err
		}
	}
	return nil
}
