package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// Skills, modes, slash commands and instructions end to end through
// `reika-lsp run` and the fake engine.

// put writes a file under root, making its directories.
func put(t *testing.T, root, rel, text string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// reika runs reika-lsp with args in root and env, and returns its output
// and exit code.
func reika(t *testing.T, root string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Dir, cmd.Env = root, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Run()
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// configHome is the XDG_CONFIG_HOME of env.
func configHome(env []string) string {
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "XDG_CONFIG_HOME="); ok {
			return v
		}
	}
	return ""
}

// chats are the engine's chat requests but the note rounds.
func chats(srv *enginetest.Server) []enginetest.Request {
	var out []enginetest.Request
	for _, r := range srv.Requests() {
		if r.Request.ToolChoice != "none" {
			out = append(out, r.Request)
		}
	}
	return out
}

func TestRunSkillListedThenLoaded(t *testing.T) {
	root := t.TempDir()
	put(t, root, ".reika/skills/pdf/SKILL.md", "---\nname: pdf\ndescription: >\n  Fill PDF forms\n  with pdftk\n---\nRun SECRET-STEP fill.sh beside this file.\n")
	put(t, root, ".claude/skills/bad/SKILL.md", "---\nname: bad\n---\nno description\n")
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: enginetest.Sequence(
		enginetest.Call("skill", `{"name":"pdf"}`), enginetest.Text("filled"))})
	defer srv.Close()
	out, errs, code := reika(t, root, isolated(t, srv.URL()), "run", "fill the form")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "bad/SKILL.md: no description") {
		t.Errorf("the bad SKILL.md is not reported:\n%s", errs)
	}
	reqs := chats(srv)
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	sys := reqs[0].Messages[0].Content
	if !strings.Contains(sys, "- pdf: Fill PDF forms with pdftk") || strings.Contains(sys, "SECRET-STEP") {
		t.Errorf("the prefix does not list the skill alone:\n%s", sys)
	}
	if !slices.Contains(reqs[0].Tools, "skill") {
		t.Errorf("no skill tool: %v", reqs[0].Tools)
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != ctxwin.RoleTool || !strings.Contains(last.Content, "Run SECRET-STEP fill.sh") {
		t.Errorf("the skill's body did not come back as its result: %+v", last)
	}
	if reqs[1].Messages[0].Content != sys {
		t.Error("loading a skill changed the prefix")
	}
}

func TestRunPlanModeSendsReadOnlyTools(t *testing.T) {
	root := t.TempDir()
	put(t, root, "a.go", "package a\n")
	srv := enginetest.New(enginetest.Options{Window: 16000})
	defer srv.Close()
	env := isolated(t, srv.URL())
	if out, errs, code := reika(t, root, env, "run", "--mode", "plan", "plan the change"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	reqs := chats(srv)
	if got := strings.Join(reqs[0].Tools, " "); got != "read grep glob fetch_url" {
		t.Errorf("plan sent the tools %q", got)
	}
	if !strings.Contains(reqs[0].Messages[0].Content, "<mode name=\"plan\">") {
		t.Error("the plan mode's prompt is not in the system message")
	}
	if _, errs, code := reika(t, root, env, "run", "--mode", "nope", "x"); code != 2 || !strings.Contains(errs, "the modes are code, plan, ask") {
		t.Errorf("an unknown mode: exit %d, %s", code, errs)
	}
}

func TestRunModeSwitchAndCustomMode(t *testing.T) {
	root := t.TempDir()
	put(t, root, ".reika/modes/review.md", "---\ndescription: review without editing\ntools: [Read, Grep]\n---\nOnly review.\n")
	srv := enginetest.New(enginetest.Options{Window: 16000})
	defer srv.Close()
	env := isolated(t, srv.URL())
	reika(t, root, env, "run", "hello")
	out, errs, code := reika(t, root, env, "run", "--continue", "/mode review")
	if code != 0 || !strings.Contains(out, "Mode review") {
		t.Fatalf("/mode review: exit %d\n%s\n%s", code, out, errs)
	}
	if n := len(chats(srv)); n != 1 {
		t.Errorf("/mode sent %d requests", n-1)
	}
	out, _, _ = reika(t, root, env, "run", "--continue", "review it")
	reqs := chats(srv)
	last := reqs[len(reqs)-1]
	if got := strings.Join(last.Tools, " "); got != "read grep" {
		t.Errorf("the resumed session in review mode sent %q\n%s", got, out)
	}
	if sys := last.Messages[0].Content; !strings.HasSuffix(sys, "<mode name=\"review\">\nOnly review.\n</mode>\n") ||
		!strings.HasPrefix(sys, strings.TrimSuffix(reqs[0].Messages[0].Content, "\n")) {
		t.Errorf("the switch did more than add the mode's prompt:\n%s", sys)
	}
	if d := ctxwin.Diverge(reqs[0].Messages, last.Messages); d.Append || d.Index != 0 {
		t.Errorf("a switch is one prefix change: diverge %+v", d)
	}
	// A subagent in a mode gets the mode's tools.
	put(t, root, ".reika/modes/sub.md", "---\ndescription: with subagents\ntools: read, subagent\n---\n")
	srv.SetScript(func(r *enginetest.Request) enginetest.Reply {
		if slices.Contains(r.Tools, "subagent") && r.Messages[len(r.Messages)-1].Role == ctxwin.RoleUser {
			return enginetest.Call("subagent", `{"task":"look"}`)
		}
		return enginetest.Text("ok")
	})
	reika(t, root, env, "run", "--mode", "sub", "--continue", "delegate")
	var sub *enginetest.Request
	for _, r := range chats(srv) {
		if strings.HasPrefix(r.Messages[0].Content, "You are a subagent") {
			sub = &r
		}
	}
	if sub == nil || strings.Join(sub.Tools, " ") != "read" {
		t.Errorf("the subagent in mode sub got %+v", sub)
	}
}

func TestRunSlashCommands(t *testing.T) {
	root := t.TempDir()
	big := strings.Repeat("// a line of the file that fills the window\n", 120)
	put(t, root, "big.go", "package a\n"+big)
	srv := enginetest.New(enginetest.Options{Window: 8192, Script: func(r *enginetest.Request) enginetest.Reply {
		last := r.Messages[len(r.Messages)-1]
		if r.ToolChoice == "none" {
			return enginetest.Text("NOTE: read big.go")
		}
		if last.Role == ctxwin.RoleUser && strings.Contains(last.Content, "read big") {
			return enginetest.Call("read", `{"path":"big.go"}`)
		}
		return enginetest.Text("done: " + last.Content[:min(len(last.Content), 40)])
	}})
	defer srv.Close()
	env := isolated(t, srv.URL())
	out, errs, code := reika(t, root, env, "run", "/compact")
	if code != 0 || !strings.Contains(out, "Nothing to fold") || len(srv.Requests()) != 0 {
		t.Errorf("/compact with no session: exit %d, %d requests\n%s\n%s", code, len(srv.Requests()), out, errs)
	}
	reika(t, root, env, "run", "--approve", "all", "read big.go")
	reika(t, root, env, "run", "--approve", "all", "--continue", "read big.go again")
	before := len(srv.Requests())
	out, errs, code = reika(t, root, env, "run", "--continue", "/compact")
	if code != 0 || !strings.Contains(out, "Folded") {
		t.Errorf("/compact: exit %d\n%s\n%s", code, out, errs)
	}
	for _, r := range srv.Requests()[before:] {
		for _, m := range r.Request.Messages {
			if strings.Contains(m.Content, "/compact") {
				t.Errorf("/compact reached the model: %q", m.Content)
			}
		}
	}

	put(t, root, ".reika/commands/fix.md", "---\ndescription: Fix an issue\nargument-hint: [issue]\n---\nFix issue $ARGUMENTS now.\n")
	put(t, configHome(env), "reika/commands/hi.md", "Say hi.\n")
	out, _, code = reika(t, root, env, "run", "/fix 42 quickly")
	if code != 0 || !strings.Contains(out, "done: Fix issue 42 quickly now.") {
		t.Errorf("/fix: exit %d\n%s", code, out)
	}
	if out, _, _ = reika(t, root, env, "run", "/hi"); !strings.Contains(out, "done: Say hi.") {
		t.Errorf("/hi:\n%s", out)
	}
	n := len(srv.Requests())
	out, errs, code = reika(t, root, env, "run", "/nope")
	if code != 1 || !strings.Contains(errs, "There is no command /nope") || !strings.Contains(errs, "/fix [issue]") || len(srv.Requests()) != n {
		t.Errorf("/nope: exit %d\n%s\n%s", code, out, errs)
	}
	if out, _, _ = reika(t, root, env, "run", "/usr/bin/env is missing"); !strings.Contains(out, "done: /usr/bin/env is missing") {
		t.Errorf("a path was taken for a command:\n%s", out)
	}
	if out, _, _ = reika(t, root, env, "run", "/help"); !strings.Contains(out, "/compact") || !strings.Contains(out, "/hi") || !strings.Contains(out, "Mode: code") {
		t.Errorf("/help:\n%s", out)
	}
}

func TestRunInstructionsAtEveryLevel(t *testing.T) {
	root := t.TempDir()
	put(t, root, "CLAUDE.md", "Claude rule.\n")
	put(t, root, "web/AGENTS.md", "Web rule.\n")
	put(t, root, "web/a.ts", "let a = 1\n")
	put(t, root, "web/b.ts", "let b = 2\n")
	srv := enginetest.New(enginetest.Options{Window: 16000, Script: func(r *enginetest.Request) enginetest.Reply {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == ctxwin.RoleUser && strings.Contains(last.Content, "read a"):
			return enginetest.Call("read", `{"path":"web/a.ts"}`)
		case last.Role == ctxwin.RoleUser && strings.Contains(last.Content, "read b"):
			return enginetest.Call("read", `{"path":"web/b.ts"}`)
		}
		return enginetest.Text("ok")
	}})
	defer srv.Close()
	env := isolated(t, srv.URL())
	put(t, configHome(env), "reika/AGENTS.md", "Global rule.\n")
	reika(t, root, env, "run", "read a")
	reika(t, root, env, "run", "--continue", "read b")
	reqs := chats(srv)
	sys := reqs[0].Messages[0].Content
	if !strings.Contains(sys, "Global rule.") || !strings.Contains(sys, "Claude rule.") || strings.Contains(sys, "Web rule.") {
		t.Errorf("the prefix's instructions:\n%s", sys)
	}
	nested := 0
	last := reqs[len(reqs)-1]
	for _, m := range last.Messages {
		if m.Role == ctxwin.RoleTool {
			nested += strings.Count(m.Content, "Web rule.")
		}
	}
	if nested != 1 {
		t.Errorf("the nested AGENTS.md reached the model %d times over two runs", nested)
	}
	if !strings.Contains(last.Messages[3].Content, "let a = 1") || !strings.Contains(last.Messages[3].Content, "Web rule.") {
		t.Errorf("the first read in web/ does not carry its instructions: %q", last.Messages[3].Content)
	}
}

func TestWindowSplitsThePrefix(t *testing.T) {
	root := t.TempDir()
	put(t, root, ".reika/skills/pdf/SKILL.md", "---\nname: pdf\ndescription: Fill PDF forms\n---\nbody\n")
	put(t, root, "AGENTS.md", "Always run go vet.\n")
	t.Chdir(root)
	out, errs, code := runEnv(t, map[string]string{"REIKA_MODE": "ask"}, "window", "--window", "16000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"system prompt", "tools ", "read, grep, glob, fetch_url, skill", "skills ", "1 listed",
		"instructions", "AGENTS.md 19 bytes", "mode ", "repo map "} {
		if !strings.Contains(out, want) {
			t.Errorf("window lacks %q:\n%s", want, out)
		}
	}
	out, _, _ = runEnv(t, nil, "window", "--window", "16000", "--json")
	if !strings.Contains(out, `"prefix":[{"name":"system prompt"`) || !strings.Contains(out, `"shedPoint":`) {
		t.Errorf("--json: %s", out)
	}
}
