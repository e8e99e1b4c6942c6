package engine

// llama.cpp's chunk reuse (n_cache_reuse) measured on the real server: the
// request shapes of shed and fold, at several chunk sizes. The figures of
// DefaultCacheReuse's comment and the README come from
//
//	REIKA_REUSE_SIZES=1,2,4,8,16,32,64,128,256 go test ./agent/engine -run TestRealChunkReuse -v
//
// which prints one line per scenario and size (prefix: the common prefix of
// the two prompts; kept: the tokens of the second up to its new tail; a
// chunk is false when the server shifted it from where the text it stands
// for is not; after an insertion, any cache_n beyond the prefix is a chance
// match); without the variable the test runs the sizes its checks need.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/ctxwin"
	"github.com/reika-lsp/reika-lsp/internal/gguf"
	"github.com/reika-lsp/reika-lsp/internal/goroot"
	"github.com/reika-lsp/reika-lsp/internal/llamaserver"
)

// reuseFiles are the sources the scenarios read, from the Go toolchain.
var reuseFiles = []string{"strings/builder.go", "strings/reader.go", "bytes/buffer.go", "bufio/scan.go", "io/pipe.go", "sort/sort.go", "path/path.go", "errors/wrap.go"}

// reuseSession is a session of rounds reading files, perRound results a
// round, each result `lines` numbered lines as the read tool shows them.
func reuseSession(t *testing.T, rounds, perRound, lines int) (msgs []ctxwin.Message, results []int) {
	t.Helper()
	root := goroot.Dir()
	msgs = []ctxwin.Message{{Role: ctxwin.RoleSystem, Content: "You are a coding agent. Read files with read, then answer."},
		{Role: ctxwin.RoleUser, Content: "Explain how the buffers and readers of these packages work, file by file."}}
	k := 0
	for r := 0; r < rounds; r++ {
		call := ctxwin.Message{Role: ctxwin.RoleAssistant}
		var res []ctxwin.Message
		for j := 0; j < perRound; j++ {
			f := reuseFiles[k%len(reuseFiles)]
			id := fmt.Sprintf("call_%d", k)
			k++
			call.ToolCalls = append(call.ToolCalls, ctxwin.ToolCall{ID: id, Name: "read", Arguments: fmt.Sprintf(`{"path": %q}`, f)})
			data, err := os.ReadFile(filepath.Join(root, "src", f))
			if err != nil {
				t.Skipf("SKIPPED: the Go sources are not at hand: %v", err)
			}
			src := strings.Split(string(data), "\n")[:lines]
			var b strings.Builder
			fmt.Fprintf(&b, "%s lines 1-%d of %d\n", f, lines, lines)
			for i, l := range src {
				fmt.Fprintf(&b, "%2d→%s\n", i+1, l)
			}
			res = append(res, ctxwin.Message{Role: ctxwin.RoleTool, ToolCallID: id, Content: b.String()})
		}
		msgs = append(msgs, call)
		for _, m := range res {
			msgs = append(msgs, m)
			results = append(results, len(msgs)-1)
		}
	}
	return msgs, results
}

// reuseScenario is a request and the one after it.
type reuseScenario struct {
	name      string
	prev      []ctxwin.Message
	next      []ctxwin.Message
	tail      int  // messages appended at the end of next
	insertion bool // next inserts text before what it keeps
}

func reuseScenarios(t *testing.T) []reuseScenario {
	header := func(m ctxwin.Message) ctxwin.Message {
		m.Content, _, _ = strings.Cut(m.Content, "\n")
		return m
	}
	user := func(s string) ctxwin.Message { return ctxwin.Message{Role: ctxwin.RoleUser, Content: s} }
	recap := user("Recap of the rounds folded: the first rounds read strings/builder.go and strings/reader.go and noted how each buffers its data and what it exports.")
	summaries := user("Results shed to save room: strings/builder.go (type Builder, func (b *Builder) String, Len, Cap, Reset, Grow, Write, WriteByte, WriteRune, WriteString) and the others named above.")
	a, res := reuseSession(t, 4, 1, 30)
	shed := func(prev []ctxwin.Message, which []int, inPlace bool) []ctxwin.Message {
		next := append([]ctxwin.Message(nil), prev...)
		for _, i := range which {
			next[i] = header(prev[i])
			if inPlace {
				next[i].Content += "\nShed: its outline was func (b *Builder) String() string, func (b *Builder) Len() int."
			}
		}
		return next
	}
	var s []reuseScenario
	s = append(s, reuseScenario{name: "fold: 2 of 4 rounds deleted, recap appended", prev: a,
		next: append(append(append([]ctxwin.Message(nil), a[:2]...), a[6:]...), recap), tail: 1})
	s = append(s, reuseScenario{name: "fold: recap in place of the rounds", prev: a,
		next: append(append(append([]ctxwin.Message(nil), a[:2]...), recap), a[6:]...), insertion: true})
	s = append(s, reuseScenario{name: "shed: 2 bodies deleted, headers kept, summaries appended", prev: a,
		next: append(shed(a, res[:2], false), summaries), tail: 1})
	s = append(s, reuseScenario{name: "shed: summaries in place", prev: a, next: shed(a, res[:2], true), insertion: true})
	b, res2 := reuseSession(t, 3, 2, 15)
	s = append(s, reuseScenario{name: "shed: 2 results a round, 3 adjacent bodies deleted", prev: b,
		next: append(shed(b, res2[:3], false), summaries), tail: 1})
	return s
}

// reuseSizes are the chunk sizes to measure per scenario: REIKA_REUSE_SIZES
// for the full table, else what the checks need.
func reuseSizes(t *testing.T, name string) []int {
	if env := os.Getenv("REIKA_REUSE_SIZES"); env != "" {
		var sizes []int
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				t.Fatalf("REIKA_REUSE_SIZES: %q", env)
			}
			sizes = append(sizes, n)
		}
		return sizes
	}
	switch {
	case strings.Contains(name, "adjacent"):
		return []int{DefaultCacheReuse, 32}
	case strings.HasPrefix(name, "shed: 2 bodies"):
		return []int{DefaultCacheReuse, 128}
	}
	return []int{DefaultCacheReuse}
}

// renderTokens is the prompt of msgs as the server tokenizes it, from its
// own template (/apply-template) and tokenizer.
func renderTokens(t *testing.T, c *Client, msgs []ctxwin.Message) []int {
	t.Helper()
	oreq := c.buildRequest("m", &llm.Request{Messages: msgs})
	body, _ := json.Marshal(map[string]any{"messages": oreq.Messages})
	body = rewriteRequest(body, nil)
	b, err := c.do(ctx(t), "POST", c.rootURL+"/apply-template", body)
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Prompt string `json:"prompt"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	tb, _ := json.Marshal(map[string]any{"content": p.Prompt, "parse_special": true})
	b, err = c.do(ctx(t), "POST", c.rootURL+"/tokenize", tb)
	if err != nil {
		t.Fatal(err)
	}
	var tk struct {
		Tokens []int `json:"tokens"`
	}
	if err := json.Unmarshal(b, &tk); err != nil {
		t.Fatal(err)
	}
	return tk.Tokens
}

// alignment maps each token of b to the token of a it is in a longest
// common subsequence of the two (-1: none).
func alignment(a, b []int) []int {
	n, m := len(a), len(b)
	w := m + 1
	l := make([]uint16, (n+1)*w)
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				l[i*w+j] = l[(i+1)*w+j+1] + 1
			} else {
				l[i*w+j] = max(l[(i+1)*w+j], l[i*w+j+1])
			}
		}
	}
	out := make([]int, m)
	for j := range out {
		out[j] = -1
	}
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case a[i] == b[j]:
			out[j] = i
			i, j = i+1, j+1
		case l[(i+1)*w+j] >= l[i*w+j+1]:
			i++
		default:
			j++
		}
	}
	return out
}

var chunkLine = regexp.MustCompile(`reusing chunk with size \d+, shifting KV cache \[(\d+), (\d+)\) -> \[(\d+), (\d+)\)`)

// TestRealChunkReuse: on llama-server, with n_cache_reuse at
// DefaultCacheReuse, a request shaped as deletions and a new tail reuses
// what it kept after its first difference, a request that inserts text
// before what it keeps reuses nothing of it, and no chunk is reused that
// only happens to match; a chunk size longer than the text kept between
// two deletions loses everything after them.
func TestRealChunkReuse(t *testing.T) {
	model := llamaserver.RandomModel(t)
	// No host-memory prompt cache: it would restore a request measured
	// before instead of reusing chunks. -lv 4 logs each chunk reused.
	srv := startReal(t, llamaserver.Config{Model: model, Ctx: 8192, Parallel: 1, Args: []string{"--cache-ram", "0", "-lv", "4"}})
	plain, _ := realClient(t, srv, func(c *Config) { c.CacheReuse = agent.CacheReuseOff })
	if _, err := plain.Info(ctx(t)); err != nil {
		t.Fatal(err)
	}
	t.Logf("%-58s %4s %6s %6s %6s %6s %7s %8s %6s %5s", "scenario", "N", "prev", "next", "prefix", "kept", "cache_n", "prompt_n", "chunks", "false")
	for _, sc := range reuseScenarios(t) {
		ta, tb := renderTokens(t, plain, sc.prev), renderTokens(t, plain, sc.next)
		lcp := 0
		for lcp < min(len(ta), len(tb)) && ta[lcp] == tb[lcp] {
			lcp++
		}
		align := alignment(ta, tb)
		kept := len(renderTokens(t, plain, sc.next[:len(sc.next)-sc.tail]))
		for _, n := range reuseSizes(t, sc.name) {
			c, _ := realClient(t, srv, func(c *Config) { c.CacheReuse = n })
			if _, err := plain.Complete(ctx(t), &llm.Request{Messages: sc.prev, MaxTokens: 1}, nil); err != nil {
				t.Fatal(err)
			}
			before := len(srv.Log())
			resp, err := c.Complete(ctx(t), &llm.Request{Messages: sc.next, MaxTokens: 1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			srv.WaitLog("stop processing", strings.Count(srv.Log(), "launch_slot_"), 5*time.Second)
			chunks, falses := 0, 0
			for _, m := range chunkLine.FindAllStringSubmatch(srv.Log()[before:], -1) {
				c0, _ := strconv.Atoi(m[1])
				c1, _ := strconv.Atoi(m[2])
				p0, _ := strconv.Atoi(m[3])
				chunks++
				// A chunk that only happens to match was shifted from
				// where the text it stands for is not: most of its tokens
				// align elsewhere (the alignment may differ from the
				// server's at a chunk's edges).
				same := 0
				for k := 0; k < c1-c0; k++ {
					if p0+k < len(align) && align[p0+k] == c0+k {
						same++
					}
				}
				if 2*same < c1-c0 {
					falses++
				}
			}
			tm := resp.Timings
			t.Logf("%-58s %4d %6d %6d %6d %6d %7d %8d %6d %5d", sc.name, n, len(ta), len(tb), lcp, kept, tm.CacheN, tm.PromptN, chunks, falses)
			if n != DefaultCacheReuse {
				if n > 16 && !sc.insertion && tm.CacheN > lcp+(kept-lcp)/10 && os.Getenv("REIKA_REUSE_SIZES") == "" {
					t.Errorf("%s, chunks of %d: reused %d tokens beyond the prefix of %d; the text kept between deletions is shorter than that", sc.name, n, tm.CacheN-lcp, lcp)
				}
				continue
			}
			switch {
			case falses > 0:
				t.Errorf("%s: %d of %d chunks reused text that only happens to match", sc.name, falses, chunks)
			case sc.insertion && tm.CacheN > lcp:
				t.Errorf("%s: reused %d tokens beyond the common prefix of %d after an insertion", sc.name, tm.CacheN-lcp, lcp)
			case !sc.insertion && tm.CacheN < kept-8:
				t.Errorf("%s: reused %d of the %d tokens kept (common prefix %d)", sc.name, tm.CacheN, kept, lcp)
			}
		}
	}
}

// TestRealCannotShift: a model whose memory cannot shift (sliding-window
// layers: gemma2 here) reuses no chunk of a fold-shaped request — only
// what its cache keeps of the prefix — and the server logs that it ignored
// n_cache_reuse; the same request on a model that can shift reuses what it
// kept.
func TestRealCannotShift(t *testing.T) {
	tree := llamaserver.Find(t)
	swa := gguf.Random(1)
	swa.SlidingWindow = 64
	path := filepath.Join(t.TempDir(), "reika-swa.gguf")
	if err := swa.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	sc := reuseScenarios(t)[0]
	for _, tc := range []struct {
		name  string
		model string
		shift bool
	}{{"gemma2 with a sliding window", path, false}, {"llama", llamaserver.RandomModel(t), true}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llamaserver.Start(t, tree, llamaserver.Config{Model: tc.model, Ctx: 8192, Parallel: 1, Args: []string{"--cache-ram", "0"}})
			c, _ := realClient(t, srv)
			if _, err := c.Complete(ctx(t), &llm.Request{Messages: sc.prev, MaxTokens: 1}, nil); err != nil {
				t.Fatal(err)
			}
			resp, err := c.Complete(ctx(t), &llm.Request{Messages: sc.next, MaxTokens: 1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			ta, tb := renderTokens(t, c, sc.prev), renderTokens(t, c, sc.next)
			lcp := 0
			for lcp < min(len(ta), len(tb)) && ta[lcp] == tb[lcp] {
				lcp++
			}
			kept := len(renderTokens(t, c, sc.next[:len(sc.next)-1]))
			warned := srv.WaitLog("cache reuse is not supported", 2, 5*time.Second) >= 2
			t.Logf("%s: prompt %d, common prefix %d, kept %d: cache_n %d, prompt_n %d; warned %v", tc.name, len(tb), lcp, kept, resp.Timings.CacheN, resp.Timings.PromptN, warned)
			if tc.shift && (resp.Timings.CacheN < kept-8 || warned) || !tc.shift && (resp.Timings.CacheN > lcp || !warned) {
				t.Errorf("cache_n %d (common prefix %d, kept %d), warned %v", resp.Timings.CacheN, lcp, kept, warned)
			}
			if resp.CacheReuse != DefaultCacheReuse {
				t.Errorf("asked for chunks of %d", resp.CacheReuse)
			}
		})
	}
}
