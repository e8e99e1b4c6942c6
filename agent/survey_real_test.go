package agent_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/engine"
	"github.com/reika-lsp/reika-lsp/internal/gguf"
	"github.com/reika-lsp/reika-lsp/internal/llamaserver"
)

// TestSurveyRealLlamaServer runs the 16k survey against a real llama-server
// (internal/llamaserver) serving the hand-wired tool caller of
// internal/gguf, with the same checks as on the fake: the turn completes,
// no request is refused, and every shrink at the shed point replaced a
// request of at least 92% of the shed point by the server's own count.
//
// The tool caller cannot choose what to read: each file ends in a signal
// naming the next one (see gguf.ToolCaller), so the model reads the files
// one per round, in order, through the server's real tool-call grammar and
// parser, and answers after the last. Skipped with a notice when no server
// is at hand, failed in strict mode.
func TestSurveyRealLlamaServer(t *testing.T) {
	tree := llamaserver.Find(t)
	root := t.TempDir()
	// 12 reads of 3-10 KB fill the 16k window twice over: several sheds
	// (16 reads gave 11), each checked against the server's count. (36
	// took 20 minutes of prefill on a loaded 2-core machine, 16 four, and
	// showed no more.)
	files := goFiles(t, root, 12, 3000, 10000)
	tc := gguf.ToolCaller{Default: []string{"Nothing to add."}}
	signal := func(k int) string { return fmt.Sprintf("[[f:%d]]", k) }
	for k, f := range files {
		tc.Actions = append(tc.Actions, gguf.Action{Signal: signal(k + 1),
			Pieces: []string{gguf.CallText("read", fmt.Sprintf(`{"path": %q}`, f))}})
		next := "[[end]]"
		if k+1 < len(files) {
			next = signal(k + 2)
		}
		path := filepath.Join(root, f)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, fmt.Sprintf("\n// Next: %s\n", next)...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tc.Actions = append(tc.Actions, gguf.Action{Signal: "[[end]]", Pieces: []string{"All files are read; none of them allocates more than it must."}})
	const window = 16384
	srv := llamaserver.Start(t, tree, llamaserver.Config{Model: llamaserver.ToolCallerModel(t, tc), Ctx: window, Parallel: 1,
		Args: append([]string{"-t", "2", "-tb", "2"}, llamaserver.ToolCallerArgs...)})
	// Its budget: about 2 minutes of prefill on an idle 2-core machine,
	// four on a busy one.
	out := runSurvey(t, surveyEngine{URL: srv.URL(), Engine: engine.EngineLlamaCpp, Hint: "Start with " + signal(1), Budget: 12 * time.Minute}, root, files)
	if len(out.atShrink) < 2 {
		t.Errorf("the survey shrank %d times, want at least 2", len(out.atShrink))
	}
	reads := 0
	for _, e := range out.ev.events {
		if e.Kind == agent.EventToolCall && e.Tool == "read" {
			reads++
		}
	}
	if reads != len(files) {
		t.Errorf("%d reads, want %d", reads, len(files))
	}
	t.Logf("llama-server %s, -c %d: %d reads, %d requests; %s", tree.Version, window, reads, len(out.ex), distribution(out.atShrink))
}
