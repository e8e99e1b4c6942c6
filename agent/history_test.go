package agent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/engine"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
)

// historyAgent starts an agent on root with its state in state.
func historyAgent(t *testing.T, srv *enginetest.Server, root, state string, resume bool) *agent.Agent {
	t.Helper()
	model, err := engine.New(engine.Config{BaseURL: srv.URL(), CacheDir: t.TempDir(), ModelsURL: "http://127.0.0.1:1/never"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Options{Workspace: diskWorkspace{root: root}, Model: model, StateDir: state, Resume: resume,
		Settings: agent.Settings{Approve: agent.ApproveAll}, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func mustAsk(t *testing.T, a *agent.Agent, prompt string) agent.AskResult {
	t.Helper()
	res := a.Ask(context.Background(), agent.AskParams{Prompt: prompt})
	if res.Status != agent.AskDone {
		t.Fatalf("ask %q: %+v", prompt, res)
	}
	return res
}

func listSessions(t *testing.T, a *agent.Agent) map[string]agent.SessionInfo {
	t.Helper()
	list, err := a.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]agent.SessionInfo{}
	for i, s := range list {
		out[s.ID] = s
		if i > 0 && list[i-1].Updated < s.Updated {
			t.Errorf("not the newest first: %+v", list)
		}
		if _, err := time.Parse(time.RFC3339, s.Started); err != nil {
			t.Errorf("started %q: %v", s.Started, err)
		}
		if _, err := time.Parse(time.RFC3339, s.Updated); err != nil {
			t.Errorf("updated %q: %v", s.Updated, err)
		}
	}
	return out
}

// The history lists the workspace's sessions with their titles, opens one
// read-only, and a rename survives a restart.
func TestSessionsListOpenRename(t *testing.T) {
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: func(r *enginetest.Request) enginetest.Reply {
		return enginetest.Text("answer")
	}})
	defer srv.Close()
	root, state := t.TempDir(), t.TempDir()
	a := historyAgent(t, srv, root, state, false)
	long := strings.Repeat("é", 100)
	first := mustAsk(t, a, "  \nfirst task\nwith a second line").Session
	if _, err := a.NewSession(); err != nil {
		t.Fatal(err)
	}
	second := mustAsk(t, a, long).Session
	mustAsk(t, a, "again")
	list := listSessions(t, a)
	if len(list) != 2 {
		t.Fatalf("%d sessions: %+v", len(list), list)
	}
	if s := list[first]; s.Title != "first task" || s.Turns != 1 || s.Current || s.Bytes == 0 {
		t.Errorf("first session: %+v", s)
	}
	if s := list[second]; s.Title != strings.Repeat("é", 79)+"…" || s.Turns != 2 || !s.Current {
		t.Errorf("second session: %+v", s)
	}
	page, err := a.OpenSession(first, 0)
	if err != nil {
		t.Fatal(err)
	}
	if page.Session != first || len(page.Events) < 2 || page.Events[0].Text != "first task\nwith a second line" {
		t.Errorf("open: %+v", page)
	}
	if a.Status().Session != second {
		t.Errorf("open changed the current session: %q", a.Status().Session)
	}
	if err := a.RenameSession(first, "  The\nfirst  "); err != nil {
		t.Fatal(err)
	}
	a.Close()
	b := historyAgent(t, srv, root, state, true)
	list = listSessions(t, b)
	if s := list[first]; s.Title != "The first" {
		t.Errorf("after a restart, the renamed session: %+v", s)
	}
	if s := list[second]; !s.Current {
		t.Errorf("a restart resumes the last session: %+v", s)
	}
	if err := b.RenameSession(first, ""); err != nil {
		t.Fatal(err)
	}
	if s := listSessions(t, b)[first]; s.Title != "first task" {
		t.Errorf("an empty title gives back the prompt's: %+v", s)
	}
}

// A resumed session is the one the next ask continues: the model sees its
// earlier rounds, its log grows, and a restart resumes it.
func TestSessionsResume(t *testing.T) {
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: func(r *enginetest.Request) enginetest.Reply {
		return enginetest.Text("answer " + r.Messages[len(r.Messages)-1].Content)
	}})
	defer srv.Close()
	root, state := t.TempDir(), t.TempDir()
	a := historyAgent(t, srv, root, state, false)
	first := mustAsk(t, a, "the task about zebras").Session
	a.NewSession()
	second := mustAsk(t, a, "another task").Session
	before := listSessions(t, a)[first]
	if err := a.ResumeSession(first); err != nil {
		t.Fatal(err)
	}
	if st := a.Status(); st.Session != first {
		t.Errorf("status after resume: session %q, want %q", st.Session, first)
	}
	if got := mustAsk(t, a, "and now?").Session; got != first {
		t.Errorf("the ask after resume ran in %q, want %q", got, first)
	}
	reqs := srv.Requests()
	msgs := reqs[len(reqs)-1].Request.Messages
	var seen []string
	for _, m := range msgs {
		seen = append(seen, m.Content)
	}
	all := strings.Join(seen, "\n")
	if !strings.Contains(all, "the task about zebras") || !strings.Contains(all, "answer the task about zebras") || strings.Contains(all, "another task") {
		t.Errorf("the request after resume does not continue the session:\n%s", all)
	}
	after := listSessions(t, a)[first]
	if after.Turns != 2 || after.Bytes <= before.Bytes || !after.Current {
		t.Errorf("resumed session after its ask: %+v (before %+v)", after, before)
	}
	// A resume without an ask after it is what a restart resumes.
	if err := a.ResumeSession(second); err != nil {
		t.Fatal(err)
	}
	a.Close()
	b := historyAgent(t, srv, root, state, true)
	if st := b.Status(); st.Session != second {
		t.Errorf("a restart resumes %q, want the resumed %q", st.Session, second)
	}
}

// Delete removes a session's files; deleting the current one means the
// next ask starts a fresh session.
func TestSessionsDelete(t *testing.T) {
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: func(r *enginetest.Request) enginetest.Reply {
		return enginetest.Text("answer")
	}})
	defer srv.Close()
	root, state := t.TempDir(), t.TempDir()
	a := historyAgent(t, srv, root, state, false)
	first := mustAsk(t, a, "one").Session
	a.NewSession()
	second := mustAsk(t, a, "two").Session
	dir := filepath.Dir(onlyOf(t, state, first))
	os.MkdirAll(filepath.Join(dir, first+".results"), 0o700)
	os.WriteFile(filepath.Join(dir, first+".results", "r.txt"), []byte("saved"), 0o600)
	os.WriteFile(filepath.Join(dir, first+".jsonl.cut-1"), []byte("cut"), 0o600)
	a.RenameSession(first, "named")
	if err := a.DeleteSession(first); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, first+"*"))
	if len(left) != 0 {
		t.Errorf("left after delete: %v", left)
	}
	if err := a.DeleteSession(second); err != nil {
		t.Fatal(err)
	}
	if st := a.Status(); st.Session != "" {
		t.Errorf("status after deleting the current session names %q", st.Session)
	}
	if _, err := os.Stat(filepath.Join(dir, "last")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the deleted session is still the last one: %v", err)
	}
	third := mustAsk(t, a, "three").Session
	if third == second || third == first {
		t.Errorf("the ask after deleting the current session ran in %q", third)
	}
	list := listSessions(t, a)
	if len(list) != 1 || !list[third].Current || list[third].Turns != 1 {
		t.Errorf("sessions after deletes: %+v", list)
	}
}

// onlyOf is session id's log under state.
func onlyOf(t *testing.T, state, id string) string {
	t.Helper()
	for _, l := range sessionLogs(t, state) {
		if filepath.Base(l) == id+".jsonl" {
			return l
		}
	}
	t.Fatalf("no log of %s", id)
	return ""
}

// Unknown ids, a running turn and a session another process owns are
// refused, and nothing changes.
func TestSessionsRefused(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{}, 1)
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: func(r *enginetest.Request) enginetest.Reply {
		if strings.Contains(r.Messages[len(r.Messages)-1].Content, "slow") {
			select {
			case started <- struct{}{}:
			default:
			}
			<-release
		}
		return enginetest.Text("answer")
	}})
	defer srv.Close()
	root, state := t.TempDir(), t.TempDir()
	a := historyAgent(t, srv, root, state, false)
	first := mustAsk(t, a, "one").Session
	a.NewSession()
	for _, id := range []string{"nope", "../" + first, "", "."} {
		if err := a.ResumeSession(id); !errors.Is(err, agent.ErrUnknownSession) {
			t.Errorf("resume %q: %v", id, err)
		}
		if err := a.DeleteSession(id); !errors.Is(err, agent.ErrUnknownSession) {
			t.Errorf("delete %q: %v", id, err)
		}
		if err := a.RenameSession(id, "x"); !errors.Is(err, agent.ErrUnknownSession) {
			t.Errorf("rename %q: %v", id, err)
		}
		if _, err := a.OpenSession(id, 0); !errors.Is(err, agent.ErrUnknownSession) {
			t.Errorf("open %q: %v", id, err)
		}
	}
	done := make(chan agent.AskResult)
	go func() { done <- a.Ask(context.Background(), agent.AskParams{Prompt: "slow"}) }()
	<-started
	current := a.Status().Session
	if err := a.ResumeSession(first); err == nil || !strings.Contains(err.Error(), "a turn is already running") {
		t.Errorf("resume during a turn: %v", err)
	}
	if err := a.DeleteSession(current); err == nil || !strings.Contains(err.Error(), "a turn is already running") {
		t.Errorf("delete of the running session: %v", err)
	}
	close(release)
	if res := <-done; res.Status != agent.AskDone || res.Session != current {
		t.Errorf("the turn: %+v", res)
	}
	// Another agent on the same workspace (another editor window) owns
	// the current session's log.
	b := historyAgent(t, srv, root, state, false)
	if err := b.ResumeSession(current); err == nil || !strings.Contains(err.Error(), "open in another reika-lsp") {
		t.Errorf("resume of a session another process owns: %v", err)
	}
	if err := b.DeleteSession(current); err == nil || !strings.Contains(err.Error(), "open in another reika-lsp") {
		t.Errorf("delete of a session another process owns: %v", err)
	}
	if len(listSessions(t, a)) != 2 {
		t.Errorf("sessions changed: %+v", listSessions(t, a))
	}
}
