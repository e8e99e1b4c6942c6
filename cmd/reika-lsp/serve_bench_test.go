package main

import (
	"fmt"
	"github.com/reika-lsp/reika-lsp/internal/goroot"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
)

// BenchmarkSessionRSS128k reports the resident memory of the server process
// holding a session that filled a 128k window: 300 reads of real Go source
// files, with the sheds and folds that come with them.
func BenchmarkSessionRSS128k(b *testing.B) {
	binary(b)
	for b.Loop() {
		var files []string
		dir := filepath.Join(goroot.Dir(), "src", "net", "http")
		entries, _ := os.ReadDir(dir)
		var mu sync.Mutex
		reads := 0
		srv := enginetest.New(enginetest.Options{Window: 128000, Script: func(r *enginetest.Request) enginetest.Reply {
			mu.Lock()
			defer mu.Unlock()
			if r.ToolChoice == "none" {
				return enginetest.Text("NOTE: still reading net/http.")
			}
			if reads >= 300 {
				return enginetest.Text("Done.")
			}
			f := files[reads%len(files)]
			reads++
			return enginetest.Call("read", fmt.Sprintf(`{"path":%q}`, f))
		}})
		p := startServerWith(b, serverOptions{env: []string{"REIKA_BASE_URL=" + srv.URL()}}, "serve")
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
				data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
				os.WriteFile(filepath.Join(p.root, e.Name()), data, 0o644)
				files = append(files, e.Name())
			}
		}
		p.initialize()
		idle := procKB(b, p.cmd.Process.Pid, "VmRSS")
		var res struct{ Status, Message string }
		if err := p.c.Command(p.ctx, "reika.ask", []any{map[string]any{"prompt": "read net/http"}}, &res); err != nil || res.Status != "done" {
			b.Fatalf("ask: %+v %v", res, err)
		}
		b.ReportMetric(float64(idle), "idle-rss-KB")
		b.ReportMetric(float64(procKB(b, p.cmd.Process.Pid, "VmRSS")), "session-rss-KB")
		b.ReportMetric(float64(procKB(b, p.cmd.Process.Pid, "VmHWM")), "peak-rss-KB")
		p.c.Call(p.ctx, "shutdown", nil, nil)
		p.c.Notify(p.ctx, "exit", nil)
		p.exitCode()
		srv.Close()
	}
}
