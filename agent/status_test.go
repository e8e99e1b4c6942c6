package agent_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/agent/llm"
)

// ordered records, in order, the shrinks, notices and statuses the agent
// reports.
type ordered struct {
	mu      sync.Mutex
	entries []entry
}

type entry struct {
	kind   string // "shrink", "notice", "status"
	text   string
	status agent.Status
}

func (o *ordered) add(e entry) {
	o.mu.Lock()
	o.entries = append(o.entries, e)
	o.mu.Unlock()
}

func (o *ordered) Transcript(ev agent.Event) {
	if ev.Kind == agent.EventShed || ev.Kind == agent.EventFold {
		o.add(entry{kind: "shrink", text: ev.Text})
	}
}
func (o *ordered) Status(st agent.Status)  { o.add(entry{kind: "status", status: st}) }
func (o *ordered) Notice(n agent.Notice)   { o.add(entry{kind: "notice", text: n.Text}) }
func (o *ordered) Progress(agent.Progress) {}

// TestChipAfterLongAnswer: after a long answer the size is what the
// engine counted, its prompt tokens plus its completion tokens, and a long
// answer raises no warning.
func TestChipAfterLongAnswer(t *testing.T) {
	root := t.TempDir()
	files := goFiles(t, root, 1, 3000, 9000)
	// About 5.8k tokens.
	answer := strings.Repeat("The function allocates when the builder grows past its capacity. ", 320)
	srv := enginetest.New(enginetest.Options{Window: 24576, Script: func(r *enginetest.Request) enginetest.Reply {
		if r.Index == 0 {
			return enginetest.Call("read", fmt.Sprintf(`{"path":%q}`, files[0]))
		}
		return enginetest.Text(answer)
	}})
	defer srv.Close()
	ev := &ordered{}
	a := newAgent(t, srv, root, agent.Settings{}, ev)
	if res := a.Ask(context.Background(), agent.AskParams{Prompt: "Explain the file."}); res.Status != agent.AskDone {
		t.Fatalf("%+v", res)
	}
	reqs := chats(srv)
	last := reqs[len(reqs)-1]
	want := last.PromptTokens + last.CompletionTokens
	st := a.Status()
	if last.CompletionTokens < 5000 {
		t.Fatalf("setup: the answer is only %d tokens", last.CompletionTokens)
	}
	if st.Size < want || st.Size > want+16 {
		t.Errorf("after the answer the size is %d; the engine counted %d + %d = %d", st.Size, last.PromptTokens, last.CompletionTokens, want)
	}
	if st.Percent == nil || *st.Percent >= 80 || st.Level != agent.LevelOK {
		t.Errorf("status after a long answer: %+v", st)
	}
	for _, e := range ev.entries {
		if e.kind == "notice" && strings.Contains(e.text, "of the shed point") {
			t.Errorf("a warning after a long answer: %s", e.text)
		}
	}
}

// TestWarningOncePerCrossing: on a 16k survey the 80% warning comes once
// each time the size crosses 80% of the shed point, and never says that
// output will be shed soon right after a shrink.
func TestWarningOncePerCrossing(t *testing.T) {
	root := t.TempDir()
	files := goFiles(t, root, 40, 3000, 10000)
	var mu sync.Mutex
	main := 0
	srv := enginetest.New(enginetest.Options{Window: 16384, Script: cycleScript(files, &main, &mu)})
	defer srv.Close()
	ev := &ordered{}
	a := newAgent(t, srv, root, agent.Settings{}, ev)
	if res := a.Ask(context.Background(), agent.AskParams{Prompt: cycleTask}); res.Status != agent.AskDone {
		t.Fatalf("%+v", res)
	}
	warnings, armed := 0, true
	for i, e := range ev.entries {
		switch {
		case e.kind == "status" && e.status.Percent != nil && *e.status.Percent < 80:
			armed = true
		case e.kind == "notice" && strings.Contains(e.text, "of the shed point"):
			warnings++
			if !armed {
				t.Errorf("entry %d: a second warning without the size going below 80%% in between: %s", i, e.text)
			}
			armed = false
			for j := i - 1; j >= 0; j-- {
				if ev.entries[j].kind == "notice" {
					continue
				}
				if ev.entries[j].kind == "shrink" && strings.Contains(e.text, "shed soon") {
					t.Errorf("entry %d: right after a shrink (%s), a warning that output will be shed soon: %s", i, ev.entries[j].text, e.text)
				}
				break
			}
			if i+1 >= len(ev.entries) || ev.entries[i+1].kind != "status" || *ev.entries[i+1].status.Percent < 80 {
				t.Errorf("entry %d: a warning not followed by a status at 80%% or more", i)
			}
		}
	}
	if warnings == 0 {
		t.Error("the survey never warned: the test tests nothing")
	}
}

// TestStatusBeforeDiscovery: until the engine answers, the status is the
// fixed prefix's size with no window (docs/protocol.md), then the window comes.
func TestStatusBeforeDiscovery(t *testing.T) {
	srv := enginetest.New(enginetest.Options{Window: 16384})
	defer srv.Close()
	release := make(chan struct{})
	target, _ := url.Parse(srv.RootURL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		proxy.ServeHTTP(w, r)
	}))
	defer slow.Close()
	a := newAgentAt(t, slow.URL+"/v1", t.TempDir(), agent.Settings{}, nil)
	st := a.Status()
	close(release)
	if !regexp.MustCompile(`^ctx [0-9.]+k?$`).MatchString(st.Text) || st.Size <= 0 || st.Window != nil || st.ShedPoint != nil ||
		st.Percent != nil || st.WindowSource != llm.SourceNone || st.Level != agent.LevelOK {
		t.Errorf("status before discovery: %+v", st)
	}
	st = waitDiscovered(t, a)
	if st.Window == nil || *st.Window != 16384 || st.WindowSource != llm.SourceEndpoint {
		t.Errorf("status after discovery: %+v", st)
	}
}
