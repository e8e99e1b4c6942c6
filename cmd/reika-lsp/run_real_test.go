package main

// `reika-lsp run` end to end on a real llama-server (internal/llamaserver)
// serving the hand-wired tool caller of internal/gguf. Skipped with a
// notice when no server is at hand, failed in strict mode.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/internal/gguf"
	"github.com/reika-lsp/reika-lsp/internal/llamaserver"
)

// runReal runs `reika-lsp run` in dir against srv with REIKA_DEBUG=1.
func runReal(t *testing.T, dir string, srv *llamaserver.Server, args ...string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"run", "--approve", "all"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(isolated(t, srv.URL()), "REIKA_DEBUG=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("reika-lsp run %q: %v\nstdout:\n%s\nstderr:\n%s\nserver:\n%s", args, err, out.String(), errb.String(), lastLines(srv.Log(), 40))
	}
	return out.String(), errb.String()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// maxTokensSent is the largest max_tokens of the tasks the server's slots
// ran (GET /slots keeps each slot's last task).
func maxTokensSent(t *testing.T, srv *llamaserver.Server) int {
	t.Helper()
	resp, err := http.Get(srv.RootURL() + "/slots")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var slots []struct {
		Params *struct {
			MaxTokens int `json:"max_tokens"`
		} `json:"params"`
	}
	if err := json.Unmarshal(b, &slots); err != nil {
		t.Fatalf("/slots: %v: %s", err, b)
	}
	best := -1
	for _, s := range slots {
		if s.Params != nil {
			best = max(best, s.Params.MaxTokens)
		}
	}
	return best
}

var (
	debugRe    = regexp.MustCompile(`prefix-cache round (\d+): .*reprocessed (\d+) tokens in [0-9.]+s \(cache (\d+)\)`)
	promptSize = func(m []string) int { a, _ := strconv.Atoi(m[2]); b, _ := strconv.Atoi(m[3]); return a + b }
	// tallyRe is the session's prompt tally `run` prints at its end.
	tallyRe = regexp.MustCompile(`reika-lsp run: Prompt tokens this session: (\S+) processed, (\S+) reused from the engine's cache`)
)

// TestRunRealSmallWindows: a turn completes on -c 6144 and on -c 12288
// -np 2 (6144 a slot; our fixed prefix, counted with the template, is about 3.9k tokens, so 4096 now leaves no room to answer and nothing is sent): the first request's max_tokens leaves the reply
// room although the estimate prices the fixed prefix near or above the
// window before the engine has counted it.
func TestRunRealSmallWindows(t *testing.T) {
	tree := llamaserver.Find(t)
	model := llamaserver.ToolCallerModel(t, gguf.ToolCaller{Default: []string{"Hello from the wired model."}})
	for _, cfg := range []llamaserver.Config{{Ctx: 6144, Parallel: 1}, {Ctx: 12288, Parallel: 2}} {
		t.Run(fmt.Sprintf("-c %d -np %d", cfg.Ctx, cfg.Parallel), func(t *testing.T) {
			cfg.Model, cfg.Args = model, llamaserver.ToolCallerArgs
			srv := llamaserver.Start(t, tree, cfg)
			out, errs := runReal(t, t.TempDir(), srv, "say hello")
			if !strings.Contains(out, "Hello from the wired model.") {
				t.Errorf("stdout:\n%s", out)
			}
			if !strings.Contains(errs, "engine: llama.cpp at "+srv.URL()) || !strings.Contains(errs, "window 6144 from GET /v1/models meta.n_ctx") {
				t.Errorf("the engine's discovery is not in the log:\n%s", errs)
			}
			m := debugRe.FindStringSubmatch(errs)
			if m == nil || !strings.Contains(errs, "round 1: first request;") {
				t.Fatalf("no debug line:\n%s", errs)
			}
			if got := maxTokensSent(t, srv); got < 1024 {
				t.Errorf("the first request's max_tokens was %d, want at least the reserve 1024", got)
			}
			// One request on a fresh server: all of it processed, by the
			// engine's timings.
			if tm := tallyRe.FindStringSubmatch(errs); tm == nil || tm[1] == "0" || tm[2] != "0" {
				t.Errorf("no session tally of one processed request at the end of run:\n%s", errs)
			}
			t.Logf("the engine counted the first request at %d tokens", promptSize(m))
		})
	}
}

// TestRunRealReadsShedsAndFolds: with the hand-wired tool caller, one turn
// of real tool calls through the server's grammar and parser reads a chain
// of files (each names the next with a signal), sheds and folds on a small
// window, keeps every request under it, sends the note round with
// tool_choice "none", and ends with the model's answer.
func TestRunRealReadsShedsAndFolds(t *testing.T) {
	// Large text parts first, which a shed collapses to one line; then Go
	// parts full of declarations, whose outline keeps most of them, so
	// that only a fold makes room.
	const parts, large = 28, 8
	path := func(k int) string {
		if k <= large {
			return fmt.Sprintf("notes/part%02d.txt", k)
		}
		return fmt.Sprintf("notes/part%02d.go", k)
	}
	tc := gguf.ToolCaller{Default: []string{"Nothing to add."}}
	for k := 1; k <= parts; k++ {
		tc.Actions = append(tc.Actions, gguf.Action{Signal: fmt.Sprintf("[[part:%d]]", k),
			Pieces: []string{gguf.CallText("read", fmt.Sprintf(`{"path": %q}`, path(k)))}})
	}
	tc.Actions = append(tc.Actions, gguf.Action{Signal: "[[end]]", Pieces: []string{"All parts are read."}})
	tree := llamaserver.Find(t)
	const window = 16384
	srv := llamaserver.Start(t, tree, llamaserver.Config{Model: llamaserver.ToolCallerModel(t, tc), Ctx: window, Parallel: 1,
		Args: append([]string{"-t", "2", "-tb", "2"}, llamaserver.ToolCallerArgs...)})

	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "notes"), 0o755)
	for k := 1; k <= parts; k++ {
		next := fmt.Sprintf("[[part:%d]]", k+1)
		if k == parts {
			next = "[[end]]"
		}
		var b strings.Builder
		if k <= large {
			for i := 1; i <= 24; i++ {
				fmt.Fprintf(&b, "Part %d, note %d: the cache holds what the last request sent, and an append reuses all of it.\n", k, i)
			}
			fmt.Fprintf(&b, "Continue with %s\n", next)
		} else {
			fmt.Fprintf(&b, "package notes\n\n")
			for i := 1; i <= 24; i++ {
				fmt.Fprintf(&b, "func P%dN%d() int { return %d }\n", k, i, i)
			}
			fmt.Fprintf(&b, "\n// Continue with %s\n", next)
		}
		os.WriteFile(filepath.Join(dir, path(k)), []byte(b.String()), 0o644)
	}
	out, errs := runReal(t, dir, srv, "Read the notes in order, starting with [[part:1]]")

	reads := strings.Count(out, "▸ read ")
	if reads != parts || !strings.Contains(out, "All parts are read.") {
		t.Errorf("%d reads, want %d, then the answer:\n%s", reads, parts, out)
	}
	for k := 1; k <= parts; k++ {
		if !strings.Contains(out, path(k)) {
			t.Errorf("part %d was not read", k)
		}
	}
	if !strings.Contains(out, "· Shed ") || !strings.Contains(out, "· Folded ") {
		t.Errorf("no shed or no fold:\n%s", out)
	}
	// The note round: tool calls forbidden, so the server hands back the
	// model's call as text (with tools allowed it would parse it).
	if !strings.Contains(out, "── note ──\n<tool_call>") {
		t.Errorf("no note written with tool calls forbidden:\n%s", out)
	}
	// Every request under the window, by the engine's count.
	biggest := 0
	for _, m := range debugRe.FindAllStringSubmatch(errs, -1) {
		biggest = max(biggest, promptSize(m))
	}
	if biggest == 0 || biggest >= window {
		t.Errorf("largest request %d tokens (window %d)", biggest, window)
	}
	if strings.Contains(srv.Log(), "exceeds the available context size") {
		t.Error("the server refused a request as too long")
	}
	// The session's tally: the appends between shrinks reused the cache.
	tm := tallyRe.FindStringSubmatch(errs)
	if tm == nil || tm[1] == "0" || tm[2] == "0" {
		t.Errorf("no session tally with tokens processed and reused at the end of run:\n%s", lastLines(errs, 20))
	} else {
		t.Logf("%s", strings.TrimPrefix(tm[0], "reika-lsp run: "))
	}
	t.Logf("%d debug lines name chunks reused beyond the common prefix", strings.Count(errs, "reused about "))
	t.Logf("%d reads, %d sheds, %d folds, %d notes; largest request %d of %d tokens by the engine's count", reads,
		strings.Count(out, "· Shed "), strings.Count(out, "· Folded "), strings.Count(out, "── note ──"), biggest, window)
}
