package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/engine"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/agent/tools"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// diskWorkspace is a workspace on disk.
type diskWorkspace struct {
	tools.DiskFiles
	root string
}

func (w diskWorkspace) Root() string { return w.root }

// collector records what the agent reports.
type collector struct {
	mu       sync.Mutex
	events   []agent.Event
	statuses []agent.Status
	notices  []agent.Notice
	progress []agent.Progress
	// shrinkBefore marks the main requests that a shed or fold preceded.
	shrinkBefore map[int]bool
	mainCount    func() int
}

func (c *collector) Transcript(e agent.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, e)
	if (e.Kind == agent.EventShed || e.Kind == agent.EventFold) && c.mainCount != nil {
		c.shrinkBefore[c.mainCount()] = true
	}
}
func (c *collector) Status(s agent.Status) {
	c.mu.Lock()
	c.statuses = append(c.statuses, s)
	c.mu.Unlock()
}
func (c *collector) Notice(n agent.Notice) {
	c.mu.Lock()
	c.notices = append(c.notices, n)
	c.mu.Unlock()
}
func (c *collector) Progress(p agent.Progress) {
	c.mu.Lock()
	c.progress = append(c.progress, p)
	c.mu.Unlock()
}

func (c *collector) kinds(kind string) []agent.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []agent.Event
	for _, e := range c.events {
		if e.Kind == kind && !e.Delta {
			out = append(out, e)
		}
	}
	return out
}

// goFiles copies n real source files of the Go distribution, of moderate
// size, into dir and returns their workspace-relative paths.
func goFiles(t *testing.T, dir string, n, minSize, maxSize int) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	goroot := strings.TrimSpace(string(out))
	var picked []string
	for _, pkg := range []string{"strings", "bytes", "bufio", "sort", "strconv", "unicode/utf8", "path", "container/list",
		"encoding/csv", "encoding/hex", "text/tabwriter", "io", "errors", "math/bits", "hash/crc32", "flag", "html",
		"container/ring", "container/heap", "encoding/base64", "encoding/binary", "log", "mime", "net/mail", "sync", "expvar",
		"image/color", "crypto/md5", "crypto/sha256", "compress/gzip", "archive/tar", "testing/iotest", "regexp/syntax", "go/token"} {
		entries, err := os.ReadDir(filepath.Join(goroot, "src", pkg))
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := e.Name()
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			info, err := e.Info()
			if err != nil || info.Size() < int64(minSize) || info.Size() > int64(maxSize) {
				continue
			}
			data, err := os.ReadFile(filepath.Join(goroot, "src", pkg, name))
			if err != nil {
				t.Fatal(err)
			}
			rel := filepath.ToSlash(filepath.Join("src", pkg, name))
			dst := filepath.Join(dir, rel)
			os.MkdirAll(filepath.Dir(dst), 0o755)
			if err := os.WriteFile(dst, data, 0o644); err != nil {
				t.Fatal(err)
			}
			picked = append(picked, rel)
			if len(picked) == n {
				return picked
			}
		}
	}
	t.Fatalf("found only %d Go files between %d and %d bytes", len(picked), minSize, maxSize)
	return nil
}

const cycleTask = "TASK: read the string-handling sources one by one and tell me which functions allocate."

// cycleScript reads every file one by one, greps every 5th step and runs
// bash every 7th, writes a note when asked, then answers.
func cycleScript(files []string, main *int, mu *sync.Mutex) enginetest.Script {
	step, read, notes := 0, 0, 0
	return func(r *enginetest.Request) enginetest.Reply {
		mu.Lock()
		defer mu.Unlock()
		if r.ToolChoice == "none" {
			notes++
			return enginetest.Text(fmt.Sprintf("NOTE-%d: read %d files so far; allocation happens in Builder.grow and Repeat.", notes, read))
		}
		*main++
		i := step
		step++
		switch {
		case read >= len(files):
			return enginetest.Text("Done: the allocating functions are Builder.grow, Repeat, Join and Split.")
		case i%5 == 4:
			return enginetest.Call("grep", `{"pattern":"func [A-Z]\\w*\\(","path":"src"}`)
		case i%7 == 6:
			return enginetest.Call("bash", `{"command":"wc -l src/strings/*.go | tail -1"}`)
		}
		args, _ := json.Marshal(map[string]string{"path": files[read]})
		read++
		return enginetest.Reply{Content: fmt.Sprintf("Reading %s.", files[read-1]), ToolCalls: []ctxwin.ToolCall{{Name: "read", Arguments: string(args)}}}
	}
}

// newAgent starts an agent on root against the fake engine.
func newAgent(t *testing.T, srv *enginetest.Server, root string, s agent.Settings, ev agent.Events) *agent.Agent {
	t.Helper()
	return newAgentAt(t, srv.URL(), root, s, ev)
}

// newAgentAt starts an agent on root against the engine at url.
func newAgentAt(t *testing.T, url, root string, s agent.Settings, ev agent.Events) *agent.Agent {
	t.Helper()
	model, err := engine.New(engine.Config{BaseURL: url, ContextWindow: s.ContextWindow, CacheDir: t.TempDir(),
		ModelsURL: "http://127.0.0.1:1/never"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Approve == "" {
		s.Approve = agent.ApproveAll
	}
	a, err := agent.New(agent.Options{Workspace: diskWorkspace{root: root}, Model: model, Events: ev, Settings: s,
		StateDir: t.TempDir(), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func TestShedCycleOnRealRequests(t *testing.T) {
	root := t.TempDir()
	files := goFiles(t, root, 40, 1500, 7000)
	var mu sync.Mutex
	main := 0
	srv := enginetest.New(enginetest.Options{Shape: enginetest.ShapeLlamaCpp, Window: 16000, Script: cycleScript(files, &main, &mu)})
	defer srv.Close()
	col := &collector{shrinkBefore: map[int]bool{}, mainCount: func() int { mu.Lock(); defer mu.Unlock(); return main }}
	a := newAgent(t, srv, root, agent.Settings{}, col)

	res := a.Ask(context.Background(), agent.AskParams{Prompt: cycleTask})
	if res.Status != agent.AskDone {
		t.Fatalf("turn ended %s: %s", res.Status, res.Message)
	}
	recs := srv.Requests()
	var mainReqs []enginetest.Recorded
	var notesBefore = map[int]int{} // main request index → note requests just before it
	for _, r := range recs {
		if r.Path != "/v1/chat/completions" {
			continue
		}
		if r.Overflowed || r.Status != 200 {
			t.Fatalf("request %d: overflowed %v, status %d", r.Index, r.Overflowed, r.Status)
		}
		if r.PromptTokens+r.Request.MaxTokens > 16000 {
			t.Errorf("request %d: %d prompt tokens + max_tokens %d exceed the window", r.Index, r.PromptTokens, r.Request.MaxTokens)
		}
		if r.Request.ToolChoice == "none" {
			notesBefore[len(mainReqs)]++
			// The note request appends the note prompt to the last request.
			prev := mainReqs[len(mainReqs)-1].Request
			if d := ctxwin.Diverge(prev.Messages, r.Request.Messages); !d.Append {
				t.Errorf("note request %d does not extend the previous request (diverges at %d)", r.Index, d.Index)
			}
			if strings.Join(r.Request.Tools, ",") != strings.Join(prev.Tools, ",") {
				t.Errorf("note request %d has other tools: %v", r.Index, r.Request.Tools)
			}
			continue
		}
		mainReqs = append(mainReqs, r)
	}
	if len(mainReqs) < 50 {
		t.Fatalf("only %d main requests", len(mainReqs))
	}
	folds := col.kinds(agent.EventFold)
	sheds := col.kinds(agent.EventShed)
	if len(folds) == 0 || len(sheds) == 0 {
		t.Fatalf("the session never folded (%d) or shed (%d)", len(folds), len(sheds))
	}
	diverged := 0
	// A shed read leaves the view (its round goes whole when all its
	// results are shed; else the result keeps its first line in place), and
	// a message appended by the event that shed it names it by that line,
	// with its outline.
	inPlace := regexp.MustCompile(`^src/\S+\.go lines \d+-\d+ of \d+\n$`)
	entry := regexp.MustCompile("(?m)^- round \\d+: `(src/\\S+\\.go lines \\d+-\\d+ of \\d+)`\n  outline:\n  L\\d+")
	sawShedRead := false
	for i, r := range mainReqs {
		msgs := r.Request.Messages
		found := false
		var asides strings.Builder
		shown := map[string]bool{}
		for _, m := range msgs {
			if ctxwin.IsAside(m) {
				asides.WriteString(m.Content)
			}
			if m.Role == ctxwin.RoleTool {
				shown[strings.SplitN(m.Content, "\n", 2)[0]] = !inPlace.MatchString(m.Content)
			}
		}
		for _, m := range entry.FindAllStringSubmatch(asides.String(), -1) {
			sawShedRead = true
			if shown[m[1]] {
				t.Errorf("request %d: the shed read %q is still in view whole", i, m[1])
			}
		}
		for _, m := range msgs {
			if strings.Contains(m.Content, cycleTask) {
				found = true
			}
			if m.Role == ctxwin.RoleTool && inPlace.MatchString(m.Content) && !strings.Contains(asides.String(), "`"+strings.TrimSpace(m.Content)+"`") {
				t.Errorf("request %d: no message names the shed read %q", i, m.Content)
			}
		}
		if !found {
			t.Errorf("request %d: the task definition is missing", i)
		}
		if i == 0 {
			continue
		}
		d := ctxwin.Diverge(mainReqs[i-1].Request.Messages, msgs)
		if !d.Append {
			diverged++
			if !col.shrinkBefore[i] {
				t.Errorf("request %d rewrote message %d without a shrink event", i, d.Index)
			}
		} else if col.shrinkBefore[i] {
			t.Errorf("request %d follows a shrink event but is an append", i)
		}
		if notesBefore[i] > 1 {
			t.Errorf("%d note requests before request %d", notesBefore[i], i)
		}
		// A fold brings a recap led by the note, when one was written: the
		// note round's prompt and note stay as they were sent, and the
		// fold's message follows them.
		if notesBefore[i] == 1 {
			n := len(msgs)
			if n < 3 || msgs[n-3].Content != ctxwin.NotePrompt || !strings.HasPrefix(msgs[n-2].Content, "NOTE-") ||
				!strings.Contains(msgs[n-1].Content, "<recap>") || !strings.Contains(msgs[n-1].Content, "Your note above") {
				t.Errorf("request %d after a note round does not end with the note and the recap: %q", i, msgs[max(n-3, 0):])
			}
		}
	}
	if !sawShedRead {
		t.Error("no shed read in any request")
	}
	if len(col.shrinkBefore) != diverged {
		t.Errorf("%d requests diverged, %d were preceded by a shrink event", diverged, len(col.shrinkBefore))
	}
	nFoldRequests := 0
	for i := range mainReqs {
		if notesBefore[i] == 1 {
			nFoldRequests++
		}
	}
	if nFoldRequests != len(folds) {
		t.Errorf("%d folds, %d note rounds", len(folds), nFoldRequests)
	}
	last := col.kinds(agent.EventAssistant)
	if len(last) == 0 || !strings.HasPrefix(last[len(last)-1].Text, "Done:") {
		t.Error("the turn did not end with the answer")
	}
	t.Logf("%d main requests, %d sheds, %d folds, %d notes", len(mainReqs), len(sheds), len(folds), len(notesBefore))
}

func TestNoKnownWindow(t *testing.T) {
	root := t.TempDir()
	files := goFiles(t, root, 12, 1500, 7000)
	var mu sync.Mutex
	main := 0
	srv := enginetest.New(enginetest.Options{Shape: enginetest.ShapeHosted, Window: 16000, Script: cycleScript(files, &main, &mu)})
	defer srv.Close()
	col := &collector{shrinkBefore: map[int]bool{}}
	a := newAgent(t, srv, root, agent.Settings{}, col)
	res := a.Ask(context.Background(), agent.AskParams{Prompt: cycleTask})
	if res.Status != agent.AskDone {
		t.Fatalf("turn ended %s: %s", res.Status, res.Message)
	}
	var reqs []enginetest.Recorded
	for _, r := range srv.Requests() {
		if r.Path == "/v1/chat/completions" {
			reqs = append(reqs, r)
		}
	}
	for i, r := range reqs {
		if r.Request.ToolChoice == "none" {
			t.Fatalf("a note round without a window")
		}
		if r.Request.MaxTokens != 0 {
			t.Errorf("request %d sets max_tokens %d; without a window it is left to the server", i, r.Request.MaxTokens)
		}
		shown := 0
		for j, m := range r.Request.Messages {
			if strings.Contains(m.Content, "hit the context limit") || strings.Contains(m.Content, "<recap>") {
				t.Fatalf("request %d: a cut or a fold without a window", i)
			}
			if m.Role == ctxwin.RoleTool && !strings.Contains(m.Content, "[shed]") {
				shown++
				// Only the newest round's results are whole.
				if j < len(r.Request.Messages)-2 && len(m.Content) > ctxwin.TinyResult {
					t.Errorf("request %d: an older result is whole: %.80q", i, m.Content)
				}
			}
		}
	}
	st := a.Status()
	if strings.Contains(st.Text, "%") || st.Window != nil || st.Percent != nil || st.WindowSource != llm.SourceNone {
		t.Errorf("status without a window: %+v", st)
	}
	if c := a.Compact(context.Background()); c.Folded || !strings.Contains(c.Message, "Nothing to fold against") {
		t.Errorf("compact without a window: %+v", c)
	}
	warned := false
	for _, n := range col.notices {
		if n.Level == agent.LevelWarning && strings.Contains(n.Text, "No known context window") {
			warned = true
		}
	}
	if !warned {
		t.Error("no start-up warning about the unknown window")
	}
}

var _ = sort.Strings
