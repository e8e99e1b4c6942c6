package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/engine"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// The survey: one turn that reads about 40 Go files of 3–10 KB one at a
// time, with greps and a wc -l in between, on a small window. The checks
// read only the HTTP traffic and ask the engine itself to count, so they run
// the same against the fake engine and a real one (runSurvey).

// surveyEngine is where the survey runs.
type surveyEngine struct {
	URL    string // the OpenAI-compatible base URL, ending in /v1
	Engine string // engine.EngineLlamaCpp or engine.EngineVLLM: how to ask for a count
	// Window is the setting (0: discovered).
	Window int
	// Hint, when set, is added to the survey's prompt (a real model wired
	// to signals needs the first one there).
	Hint string
	// Budget bounds the turn (0: surveyBudget). It is a hang guard, never a
	// speed target: a survey that runs past it has hung, and fails saying
	// so instead of running into go test's timeout, which kills every test
	// of the package.
	Budget time.Duration
}

// surveyBudget is a survey's budget on the fake engine: it takes seconds.
const surveyBudget = 3 * time.Minute

// exchange is one chat completion request as the recorder saw it.
type exchange struct {
	body   []byte
	status int
	note   bool // tool_choice "none": a note round
}

// recorder is an http.RoundTripper that keeps every chat completion
// request and the status it was answered with.
type recorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	ex   []exchange // guarded by mu
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/chat/completions") {
		return r.base.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	resp, err := r.base.RoundTrip(req)
	var choice struct {
		ToolChoice string `json:"tool_choice"`
	}
	json.Unmarshal(body, &choice)
	e := exchange{body: body, note: choice.ToolChoice == "none"}
	if err == nil {
		e.status = resp.StatusCode
	}
	r.mu.Lock()
	r.ex = append(r.ex, e)
	r.mu.Unlock()
	return resp, err
}

// mains is the number of main (not note) requests so far.
func (r *recorder) mains() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.ex {
		if !e.note {
			n++
		}
	}
	return n
}

func (r *recorder) exchanges() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ex)
}

// shrinkAt is one shrink event: after the results of main request Main
// (1-based), with the shed point then in force.
type shrinkAt struct {
	Main      int
	ShedPoint int
	Reason    string
}

// surveyEvents records the shrinks, the statuses and the notices.
type surveyEvents struct {
	rec *recorder

	mu       sync.Mutex
	shrinks  []shrinkAt
	statuses []agent.Status
	notices  []agent.Notice
	events   []agent.Event
}

func (e *surveyEvents) Transcript(ev agent.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !ev.Delta {
		e.events = append(e.events, ev)
	}
	if ev.Kind != agent.EventShed && ev.Kind != agent.EventFold {
		return
	}
	n := e.rec.mains()
	if k := len(e.shrinks); k > 0 && e.shrinks[k-1].Main == n {
		return // the fold of the same event
	}
	reason := ctxwin.ReasonShedPoint
	if strings.Contains(ev.Text, ctxwin.ReasonOverflow) {
		reason = ctxwin.ReasonOverflow
	}
	e.shrinks = append(e.shrinks, shrinkAt{Main: n, Reason: reason})
}

func (e *surveyEvents) Status(st agent.Status) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.statuses = append(e.statuses, st)
	// The status after a shrink is the first with its budget.
	if k := len(e.shrinks); k > 0 && e.shrinks[k-1].ShedPoint == 0 && st.ShedPoint != nil {
		e.shrinks[k-1].ShedPoint = *st.ShedPoint
	}
}

func (e *surveyEvents) Notice(n agent.Notice) {
	e.mu.Lock()
	e.notices = append(e.notices, n)
	e.mu.Unlock()
}

func (e *surveyEvents) Progress(agent.Progress) {}

// surveyResult is what a survey run leaves for the checks.
type surveyResult struct {
	res agent.AskResult
	ex  []exchange
	ev  *surveyEvents
	// atShrink is, per shrink at the shed point, the engine's count of the
	// request the shrink replaced, as a share of the shed point.
	atShrink []float64
}

// runSurvey runs the survey of files (workspace-relative, under root)
// against eng and checks what must hold on any engine: the turn completes,
// no request is refused, and every shrink at the shed point replaced a
// request of at least 92% of the shed point by the engine's own count.
func runSurvey(t *testing.T, eng surveyEngine, root string, files []string) surveyResult {
	t.Helper()
	rec := &recorder{base: http.DefaultTransport}
	ev := &surveyEvents{rec: rec}
	model, err := engine.New(engine.Config{BaseURL: eng.URL, ContextWindow: eng.Window, CacheDir: t.TempDir(),
		ModelsURL: "http://127.0.0.1:1/never", HTTPClient: &http.Client{Transport: rec}, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Options{Workspace: diskWorkspace{root: root}, Model: model, Events: ev,
		Settings: agent.Settings{Approve: agent.ApproveAll, ContextWindow: eng.Window}, StateDir: t.TempDir(), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// The prompt names no file: a file the prompt names defines the task
	// and is never shed.
	prompt := cycleTask + " They are the Go files under src/ other than tests. Read each with the read tool, one per round; grep or count lines when it helps."
	if eng.Hint != "" {
		prompt += " " + eng.Hint
	}
	budget := eng.Budget
	if budget == 0 {
		budget = surveyBudget
	}
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	out := surveyResult{res: a.Ask(ctx, agent.AskParams{Prompt: prompt}), ev: ev}
	out.ex = rec.exchanges()
	if ctx.Err() != nil {
		t.Fatalf("the survey ran past its budget of %v (a hang guard): %d requests, the turn ended %s: %s",
			budget, len(out.ex), out.res.Status, out.res.Message)
	}
	if out.res.Status != agent.AskDone {
		t.Errorf("the turn ended %s: %s", out.res.Status, out.res.Message)
	}
	var mains []exchange
	for i, e := range out.ex {
		if e.status != http.StatusOK {
			t.Errorf("request %d was answered %d", i, e.status)
		}
		if !e.note {
			mains = append(mains, e)
		}
	}
	ev.mu.Lock()
	shrinks := slices.Clone(ev.shrinks)
	ev.mu.Unlock()
	for _, s := range shrinks {
		if s.Reason != ctxwin.ReasonShedPoint {
			continue
		}
		if s.Main < 1 || s.Main >= len(mains) || s.ShedPoint == 0 {
			t.Errorf("a shrink after main request %d of %d (shed point %d) has no request before and after it", s.Main, len(mains), s.ShedPoint)
			continue
		}
		msgs, tools := replaced(t, mains[s.Main-1].body, mains[s.Main].body)
		n, err := engineCount(eng, msgs, tools)
		if err != nil {
			t.Fatalf("counting the request before the shrink after request %d: %v", s.Main, err)
		}
		share := float64(n) / float64(s.ShedPoint)
		out.atShrink = append(out.atShrink, share)
		if share < 0.92 {
			t.Errorf("the shrink after request %d replaced a request of %d tokens, %.0f%% of the shed point %d", s.Main, n, share*100, s.ShedPoint)
		}
	}
	return out
}

// replaced is the request a shrink replaced (ctxwin.Replaced), in the
// wire form: the request before it (prev) with the newest round of the
// request after it (next) appended.
func replaced(t *testing.T, prev, next []byte) (msgs, tools []json.RawMessage) {
	t.Helper()
	var p, n struct {
		Messages []json.RawMessage `json:"messages"`
		Tools    []json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(prev, &p) != nil || json.Unmarshal(next, &n) != nil {
		t.Fatal("a request body does not parse")
	}
	parsed := make([]ctxwin.Message, len(n.Messages))
	for i, m := range n.Messages {
		json.Unmarshal(m, &parsed[i])
	}
	start, end := ctxwin.NewestItem(parsed)
	if start >= end || parsed[start].Role != ctxwin.RoleAssistant {
		t.Fatal("the request after a shrink does not end in a round")
	}
	return append(slices.Clone(p.Messages), n.Messages[start:end]...), n.Tools
}

// engineCount asks the engine how many tokens a chat request's prompt
// holds: llama.cpp's /apply-template and /tokenize, vLLM's /tokenize with
// messages.
func engineCount(eng surveyEngine, msgs, tools []json.RawMessage) (int, error) {
	root := strings.TrimSuffix(strings.TrimRight(eng.URL, "/"), "/v1")
	post := func(path string, body any, out any) error {
		b, _ := json.Marshal(body)
		resp, err := http.Post(root+path, "application/json", bytes.NewReader(b))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: HTTP %d: %.200s", path, resp.StatusCode, data)
		}
		return json.Unmarshal(data, out)
	}
	chat := map[string]any{"messages": msgs}
	if len(tools) > 0 {
		chat["tools"] = tools
	}
	switch eng.Engine {
	case engine.EngineVLLM:
		var got struct {
			Count int `json:"count"`
		}
		err := post("/tokenize", chat, &got)
		return got.Count, err
	case engine.EngineLlamaCpp:
		var tmpl struct {
			Prompt string `json:"prompt"`
		}
		if err := post("/apply-template", chat, &tmpl); err != nil {
			return 0, err
		}
		var got struct {
			Tokens []json.RawMessage `json:"tokens"`
		}
		err := post("/tokenize", map[string]any{"content": tmpl.Prompt, "add_special": true}, &got)
		return len(got.Tokens), err
	}
	return 0, fmt.Errorf("no way to count with engine %q", eng.Engine)
}

// distribution formats the min and the median of shares.
func distribution(shares []float64) string {
	if len(shares) == 0 {
		return "no shrinks"
	}
	s := slices.Clone(shares)
	sort.Float64s(s)
	return fmt.Sprintf("%d shrinks, min %.0f%%, median %.0f%%", len(s), s[0]*100, s[len(s)/2]*100)
}

// TestSurveySmallWindows runs the survey on the fake engine in llama.cpp's
// and vLLM's shapes, at 16k and 32k, with a tokenizer denser than the
// client's estimate (2.5 characters a token for code) and one sparser (4.5).
func TestSurveySmallWindows(t *testing.T) {
	root := t.TempDir()
	files := goFiles(t, root, 40, 3000, 10000)
	// -short (the race run's) takes two of the eight: each shape once, each
	// window and each density once.
	inShort := map[string]bool{enginetest.ShapeLlamaCpp + "/16k/2.5": true, enginetest.ShapeVLLM + "/32k/4.5": true}
	for _, shape := range []string{enginetest.ShapeLlamaCpp, enginetest.ShapeVLLM} {
		for _, window := range []int{16384, 32768} {
			for _, density := range []float64{2.5, 4.5} {
				name := fmt.Sprintf("%s/%dk/%.1f", shape, window/1024, density)
				if testing.Short() && !inShort[name] {
					continue
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel() // each has an engine of its own
					var mu sync.Mutex
					main := 0
					srv := enginetest.New(enginetest.Options{Shape: shape, Window: window, CodeCharsPerToken: density,
						Script: cycleScript(files, &main, &mu)})
					defer srv.Close()
					kind := engine.EngineLlamaCpp
					if shape == enginetest.ShapeVLLM {
						kind = engine.EngineVLLM
					}
					out := runSurvey(t, surveyEngine{URL: srv.URL(), Engine: kind}, root, files)
					if len(out.atShrink) == 0 {
						t.Error("the survey never shrank")
					}
					var bytes, tokens int
					for _, f := range files {
						b, _ := os.ReadFile(root + "/" + f)
						bytes += len(b)
						tokens += srv.Tokens(string(b))
					}
					t.Logf("%s: files at %.2f chars/token; %d requests; %s", name, float64(bytes)/float64(tokens), len(out.ex), distribution(out.atShrink))
				})
			}
		}
	}
}

// TestSurveyRealEngine runs the survey against the engine at
// REIKA_SURVEY_URL (an OpenAI-compatible base URL), whose kind
// REIKA_SURVEY_ENGINE names (llama.cpp or vllm), with the window
// REIKA_SURVEY_WINDOW when set. The model decides what to read.
func TestSurveyRealEngine(t *testing.T) {
	url := os.Getenv("REIKA_SURVEY_URL")
	if url == "" {
		t.Skip("REIKA_SURVEY_URL is not set: the survey against a real engine did not run")
	}
	window, _ := strconv.Atoi(os.Getenv("REIKA_SURVEY_WINDOW"))
	kind := os.Getenv("REIKA_SURVEY_ENGINE")
	if kind == "" {
		kind = engine.EngineLlamaCpp
	}
	root := t.TempDir()
	files := goFiles(t, root, 40, 3000, 10000)
	out := runSurvey(t, surveyEngine{URL: url, Engine: kind, Window: window}, root, files)
	t.Logf("%d requests; %s", len(out.ex), distribution(out.atShrink))
}
