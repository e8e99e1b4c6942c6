package agent_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/engine"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/agent/llm"
)

// chatRequests counts the chat completion requests an engine answered.
func chatRequests(srv *enginetest.Server) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Path == "/v1/chat/completions" {
			n++
		}
	}
	return n
}

// TestLogWriteFailureStopsTheTurn makes the session log's writes fail
// halfway, as a full disk does, in the middle of a turn: the turn stops
// with a clear error before another round runs unrecorded, the status and
// a notice say so, and once writes succeed again the session goes on with
// a log that replays whole.
func TestLogWriteFailureStopsTheTurn(t *testing.T) {
	root := t.TempDir()
	files := goFiles(t, root, 12, 1500, 7000)
	srv := enginetest.New(enginetest.Options{Window: 32000, Script: answerResumes(readLoop(files))})
	defer srv.Close()
	state := t.TempDir()
	col := &collector{shrinkBefore: map[int]bool{}}
	r := resumer{t: t, srv: srv, root: root, state: state, ev: col}
	a := r.start()
	defer a.Close()
	enospc := fmt.Errorf("write: %w", syscall.ENOSPC)
	agent.FailLogWritesPast(a, 20000, enospc)
	res := a.Ask(context.Background(), agent.AskParams{Prompt: "read everything"})
	if res.Status != agent.AskError || !strings.Contains(res.Message, "no space left on device") || !strings.Contains(res.Message, "the turn was stopped") {
		t.Fatalf("a turn whose log cannot be written: %+v", res)
	}
	if st := a.Status(); st.Level != agent.LevelError || !strings.Contains(st.Tooltip, "no space left on device") {
		t.Errorf("status after the failure: level %q, tooltip %q", st.Level, st.Tooltip)
	}
	errs := 0
	for _, n := range col.notices {
		if n.Level == agent.LevelError && strings.Contains(n.Text, "no space left on device") {
			errs++
		}
	}
	if errs != 1 {
		t.Errorf("%d error notices about the log, want 1: %+v", errs, col.notices)
	}
	// Nothing ran unrecorded: the engine answered only the round that
	// could not be logged beyond the rounds the log holds.
	logged := 0
	for _, rec := range readRecords(t, onlyLog(t, state)) {
		if rec.Kind == "round" {
			logged++
		}
	}
	if got := chatRequests(srv); got != logged+1 {
		t.Errorf("the engine answered %d requests for %d logged rounds: a round ran unrecorded", got, logged)
	}

	agent.FailLogWritesPast(a, -1, nil)
	if res := a.Ask(context.Background(), agent.AskParams{Prompt: "RESUME once there is room"}); res.Status != agent.AskDone {
		t.Fatalf("ask once writes succeed: %+v", res)
	}
	a.Close()
	if res := r.ask("RESUME after a restart"); res.Status != agent.AskDone {
		t.Fatalf("resume after the failure: %+v", res)
	}
	recs := readRecords(t, onlyLog(t, state))
	if recs[len(recs)-1].Kind != "state" || len(sessionLogs(t, state)) != 1 {
		t.Errorf("the log does not end in a whole round after the restart")
	}
}

// TestSecondOwnerStartsItsOwnSession opens one workspace's session in two
// agents: the second says the session is in use and starts its own, and
// neither log holds the other's turns.
func TestSecondOwnerStartsItsOwnSession(t *testing.T) {
	r, _ := scriptedSession(t)
	a := r.start()
	defer a.Close()
	col := &collector{shrinkBefore: map[int]bool{}}
	r2 := r
	r2.ev = col
	b := r2.start()
	defer b.Close()
	warned := false
	for _, n := range col.notices {
		warned = warned || n.Level == agent.LevelWarning && strings.Contains(n.Text, "open in another reika-lsp")
	}
	if !warned {
		t.Errorf("the second agent did not say the session is in use: %+v", col.notices)
	}
	if b.HasTurns() {
		t.Error("the second agent took over the first one's session")
	}
	var wg sync.WaitGroup
	for _, x := range []struct {
		a      *agent.Agent
		prompt string
	}{{a, "RESUME in the first"}, {b, "RESUME in the second"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res := x.a.Ask(context.Background(), agent.AskParams{Prompt: x.prompt}); res.Status != agent.AskDone {
				t.Errorf("%s: %+v", x.prompt, res)
			}
		}()
	}
	wg.Wait()
	if a.Status().Session == b.Status().Session {
		t.Fatal("both agents in one session")
	}
	a.Close()
	b.Close()
	logs := sessionLogs(t, r.state)
	if len(logs) != 2 {
		t.Fatalf("%d session logs, want 2", len(logs))
	}
	for _, p := range logs {
		var prompts []string
		for _, rec := range readRecords(t, p) {
			if rec.Kind == "turn" {
				prompts = append(prompts, rec.Prompt)
			}
		}
		first, second := false, false
		for _, p := range prompts {
			first = first || p == "RESUME in the first"
			second = second || p == "RESUME in the second"
		}
		if first && second {
			t.Errorf("%s holds the turns of both agents: %q", p, prompts)
		}
	}
}

// slowReads reads files one a round (readLoop) and signals each request
// on round, until n reads; then it answers.
func slowReads(files []string, n int, round chan<- int) enginetest.Script {
	reads := readLoop(files)
	var mu sync.Mutex
	i := 0
	return func(r *enginetest.Request) enginetest.Reply {
		if r.ToolChoice == "none" {
			return reads(r)
		}
		mu.Lock()
		i++
		n, done := i, i > n
		mu.Unlock()
		if round != nil {
			round <- n
		}
		if done {
			return enginetest.Text("done")
		}
		return reads(r)
	}
}

// reconfigurable starts an agent on ws whose settings can change its
// endpoint settings (Options.NewModel), as the server's can.
func reconfigurable(t *testing.T, srv *enginetest.Server, ws agent.Workspace, ev agent.Events) (*agent.Agent, agent.Settings) {
	t.Helper()
	newModel := func(s agent.Settings) (llm.Model, error) {
		return engine.New(engine.Config{BaseURL: srv.URL(), ContextWindow: s.ContextWindow, CacheDir: t.TempDir(), ModelsURL: "http://127.0.0.1:1/never"})
	}
	base := agent.Settings{BaseURL: srv.URL(), Approve: agent.ApproveAll}
	model, _ := newModel(base)
	a, err := agent.New(agent.Options{Workspace: ws, Model: model, Events: ev, Settings: base, StateDir: t.TempDir(), NewModel: newModel})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, base
}

// TestSaveDuringATurn saves the transcript again and again while a turn
// runs (go test -race sees any unguarded access to the session): every
// save succeeds and holds the rounds logged so far.
func TestSaveDuringATurn(t *testing.T) {
	root := t.TempDir()
	files := goFiles(t, root, 8, 1500, 7000)
	rounds := make(chan int)
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: slowReads(files, 24, rounds)})
	defer srv.Close()
	a := newAgent(t, srv, root, agent.Settings{}, nil)
	done := make(chan agent.AskResult)
	go func() { done <- a.Ask(context.Background(), agent.AskParams{Prompt: "read them all"}) }()
	saves := 0
	for n := range rounds {
		if n < 2 {
			continue // the session exists once the first round is logged
		}
		path, err := a.Save("")
		if err != nil {
			t.Fatalf("save during round %d: %v", n, err)
		}
		md, _ := os.ReadFile(path)
		if !strings.Contains(string(md), fmt.Sprintf("### Round %d\n", n-1)) {
			t.Errorf("the save during round %d lacks round %d", n, n-1)
		}
		saves++
		if n > 24 {
			break
		}
	}
	if res := <-done; res.Status != agent.AskDone {
		t.Fatalf("the turn: %+v", res)
	}
	if saves < 20 {
		t.Errorf("only %d saves", saves)
	}
}

// gatedWorkspace holds the turn in its read of one file until the test
// lets it go, so that the test can act while the turn runs (and the fake
// engine is free to answer).
type gatedWorkspace struct {
	diskWorkspace
	path          string
	reached, gate chan struct{}
	once          sync.Once
}

func (w *gatedWorkspace) ReadFile(path string) ([]byte, error) {
	if strings.HasSuffix(path, w.path) {
		w.once.Do(func() {
			close(w.reached)
			<-w.gate
		})
	}
	return w.diskWorkspace.ReadFile(path)
}

// TestSettingsChangeDuringATurn changes the window and maxTokens while a
// turn runs: the running turn applies them from its next round and says so
// in the transcript, and the next requests follow them.
func TestSettingsChangeDuringATurn(t *testing.T) {
	root := t.TempDir()
	files := goFiles(t, root, 8, 1500, 7000)
	srv := enginetest.New(enginetest.Options{Window: 32000, Script: slowReads(files, 8, nil)})
	defer srv.Close()
	col := &collector{shrinkBefore: map[int]bool{}}
	ws := &gatedWorkspace{diskWorkspace: diskWorkspace{root: root}, path: files[2], reached: make(chan struct{}), gate: make(chan struct{})}
	a, base := reconfigurable(t, srv, ws, col)
	done := make(chan agent.AskResult)
	go func() { done <- a.Ask(context.Background(), agent.AskParams{Prompt: "read them all"}) }()
	<-ws.reached // the third round's read
	changed := base
	changed.ContextWindow, changed.MaxTokens = 24000, 1500
	if err := a.UpdateSettings(changed); err != nil {
		t.Fatal(err)
	}
	if st := a.Status(); !st.Busy || st.Window == nil || *st.Window != 32000 {
		t.Errorf("the status changed under the running turn: %+v", st)
	}
	before := len(mainRequests(srv))
	close(ws.gate)
	if res := <-done; res.Status != agent.AskDone {
		t.Fatalf("the turn: %+v", res)
	}
	var said []string
	for _, e := range col.kinds(agent.EventInfo) {
		if strings.HasPrefix(e.Text, "Settings changed: ") {
			said = append(said, e.Text)
		}
	}
	if len(said) != 1 || !strings.Contains(said[0], "context window 32000 → 24000 tokens (from setting)") ||
		!strings.Contains(said[0], "maxTokens 0 → 1500") || !strings.Contains(said[0], "applied from round 4") {
		t.Errorf("the transcript says %q, want one line with the new window and maxTokens, from round 4", said)
	}
	all := mainRequests(srv)
	if len(all) <= before {
		t.Fatal("no request after the change")
	}
	for i, r := range all {
		switch {
		case i < before && r.MaxTokens == 1500:
			t.Errorf("request %d, before the change, already has max_tokens 1500", i)
		case i >= before && r.MaxTokens != 1500:
			t.Errorf("request %d, after the change, has max_tokens %d, want 1500", i, r.MaxTokens)
		}
	}
	if st := a.Status(); st.Window == nil || *st.Window != 24000 || st.WindowSource != llm.SourceSetting {
		t.Errorf("status after the turn: %+v", st)
	}
}

// mainRequests are the chat requests of an engine, note rounds left out.
func mainRequests(srv *enginetest.Server) []enginetest.Request {
	var out []enginetest.Request
	for _, r := range srv.Requests() {
		if r.Path == "/v1/chat/completions" && r.Request.ToolChoice != "none" {
			out = append(out, r.Request)
		}
	}
	return out
}

// TestSettingsChangeWhileIdle changes the window between turns: the status
// shows it at once and the next turn says what changed.
func TestSettingsChangeWhileIdle(t *testing.T) {
	srv := enginetest.New(enginetest.Options{Window: 32000})
	defer srv.Close()
	col := &collector{shrinkBefore: map[int]bool{}}
	a, base := reconfigurable(t, srv, diskWorkspace{root: t.TempDir()}, col)
	a.Ask(context.Background(), agent.AskParams{Prompt: "hi"})
	changed := base
	changed.ContextWindow = 20000
	if err := a.UpdateSettings(changed); err != nil {
		t.Fatal(err)
	}
	if st := a.Status(); st.Window == nil || *st.Window != 20000 {
		t.Errorf("status right after the change: %+v", st)
	}
	a.Ask(context.Background(), agent.AskParams{Prompt: "again"})
	var said []string
	for _, e := range col.kinds(agent.EventInfo) {
		said = append(said, e.Text)
	}
	if len(said) != 1 || !strings.Contains(said[0], "context window 32000 → 20000 tokens") || !strings.Contains(said[0], "applied from round 2") {
		t.Errorf("the second turn says %q", said)
	}
}

// TestPromptLargerThanTheWindow refuses a prompt larger than the window's
// worth of bytes before anything is logged or sent.
func TestPromptLargerThanTheWindow(t *testing.T) {
	srv := enginetest.New(enginetest.Options{Window: 16000})
	defer srv.Close()
	a := newAgent(t, srv, t.TempDir(), agent.Settings{}, nil)
	a.Ask(context.Background(), agent.AskParams{Prompt: "hi"})
	before := chatRequests(srv)
	res := a.Ask(context.Background(), agent.AskParams{Prompt: strings.Repeat("x", 16000*4+1)})
	if res.Status != agent.AskError || !strings.Contains(res.Message, "more than the 16000-token context window can hold") {
		t.Fatalf("%+v", res)
	}
	if chatRequests(srv) != before {
		t.Error("the prompt was sent")
	}
	if res := a.Ask(context.Background(), agent.AskParams{Prompt: strings.Repeat("y", 1000)}); res.Status != agent.AskDone {
		t.Errorf("a prompt that fits: %+v", res)
	}
}

// TestRetriedStreamEndsWithTheWholeReply breaks a stream after some text:
// the engine client asks again; the transcript retracts the broken text
// (an empty final message) before the second answer streams, and its last
// final assistant message is that answer's whole reply, even when it has
// no text at all.
func TestRetriedStreamEndsWithTheWholeReply(t *testing.T) {
	const whole = "The whole answer, in several words that stream one by one."
	for name, retried := range map[string]enginetest.Reply{
		"text":      enginetest.Text(whole),
		"tool call": enginetest.Call("glob", `{"pattern":"*.none"}`),
	} {
		t.Run(name, func(t *testing.T) {
			n := 0
			srv := enginetest.New(enginetest.Options{Window: 16000, Script: func(r *enginetest.Request) enginetest.Reply {
				n++
				switch n {
				case 1:
					reply := enginetest.Text("A first attempt that breaks off before its end, never to be seen again.")
					reply.Fault = enginetest.Fault{Truncate: true, AfterChunks: 2}
					return reply
				case 2:
					return retried
				}
				return enginetest.Text("done")
			}})
			defer srv.Close()
			col := &collector{shrinkBefore: map[int]bool{}}
			a := newAgent(t, srv, t.TempDir(), agent.Settings{}, col)
			if res := a.Ask(context.Background(), agent.AskParams{Prompt: "hi"}); res.Status != agent.AskDone {
				t.Fatal(res)
			}
			var deltas strings.Builder
			finals := []string{}
			for _, e := range col.events {
				if e.Kind == agent.EventAssistant && e.Round == 1 {
					if e.Delta {
						deltas.WriteString(e.Text)
					} else {
						finals = append(finals, e.Text)
					}
				}
			}
			if !strings.HasPrefix(deltas.String(), "A first attempt") {
				t.Fatalf("the fake did not stream the first attempt (streamed %q)", deltas.String())
			}
			// The broken text is retracted (a final, empty message) at once;
			// the last final message is the whole reply.
			if len(finals) == 0 || finals[0] != "" || finals[len(finals)-1] != retried.Content || len(finals) > 2 {
				t.Errorf("final assistant messages of round 1: %q, want the retraction then [%q]", finals, retried.Content)
			}
		})
	}
}

// onStatus calls fn with each status published.
type onStatus struct {
	nopEvents
	fn func(agent.Status)
}

func (o *onStatus) Status(s agent.Status) { o.fn(s) }

type nopEvents struct{}

func (nopEvents) Transcript(agent.Event)  {}
func (nopEvents) Status(agent.Status)     {}
func (nopEvents) Notice(agent.Notice)     {}
func (nopEvents) Progress(agent.Progress) {}

// TestNotBusyAfterTheTurn publishes a busy status from outside the turn
// (a settings change, as discovery does) after the turn's last status and
// before its end: once the turn has ended the status is not busy, since
// the server asks it whether a turn runs.
func TestNotBusyAfterTheTurn(t *testing.T) {
	srv := enginetest.New(enginetest.Options{Window: 16000})
	defer srv.Close()
	var (
		a     *agent.Agent
		base  agent.Settings
		armed atomic.Bool
	)
	ev := &onStatus{fn: func(st agent.Status) {
		if !st.Busy && armed.CompareAndSwap(true, false) {
			changed := base
			changed.ContextWindow = 12000
			a.UpdateSettings(changed) // publishes while the turn still holds the claim
		}
	}}
	a, base = reconfigurable(t, srv, diskWorkspace{root: t.TempDir()}, ev)
	a.Ask(context.Background(), agent.AskParams{Prompt: "hi"})
	armed.Store(true)
	if res := a.Ask(context.Background(), agent.AskParams{Prompt: "again"}); res.Status != agent.AskDone {
		t.Fatal(res)
	}
	if armed.Load() {
		t.Fatal("the turn published no status that was not busy")
	}
	if a.Status().Busy {
		t.Error("busy after the turn ended")
	}
}
