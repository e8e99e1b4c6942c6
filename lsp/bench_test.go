package lsp

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/lsp/lsptest"
)

// streaming is a turn that streams assistant deltas (one every interval,
// a round's progress report and status every 50) until it is cancelled.
func streaming(interval time.Duration, started chan<- struct{}) func(context.Context, *fakeAgent, agent.AskParams) agent.AskResult {
	return func(ctx context.Context, f *fakeAgent, p agent.AskParams) agent.AskResult {
		ev := f.Opts.Events
		close(started)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for i := 1; ; i++ {
			select {
			case <-ctx.Done():
				return agent.AskResult{Session: "s1", Status: agent.AskCancelled}
			case <-tick.C:
			}
			ev.Transcript(agent.Event{Session: "s1", Turn: 1, Round: i / 50, Kind: agent.EventAssistant, Text: "token ", Delta: true})
			if i%50 == 0 {
				ev.Progress(agent.Progress{Turn: 1, Round: i / 50, Text: fmt.Sprintf("round %d", i/50)})
				ev.Status(f.Resize(i * 10))
			}
		}
	}
}

// BenchmarkStatusDuringTurn measures the reika.status round trip while a
// turn streams a delta every millisecond (faster than any engine emits
// tokens). It reports the median and 99th percentile.
func BenchmarkStatusDuringTurn(b *testing.B) {
	started := make(chan struct{})
	h := start(b, harnessOptions{setup: func(f *fakeAgent) { f.Turn = streaming(time.Millisecond, started) }})
	h.initialized()
	ask := h.c.Go(context.Background(), "workspace/executeCommand", map[string]any{"command": CmdAsk, "arguments": []any{map[string]any{"prompt": "stream"}}}, nil)
	<-started
	var lat []time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		if err := h.c.Command(h.ctx, CmdStatus, nil, nil); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	h.mustCommand(CmdCancel, nil, nil)
	<-ask
	if n := len(h.c.Notes(MethodTranscript)); n == 0 {
		b.Fatal("nothing streamed during the benchmark")
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(len(h.c.Notes(MethodTranscript))), "events-during-run")
}

// BenchmarkStartup measures an in-process server from Serve to initialize
// answered.
func BenchmarkStartup(b *testing.B) {
	for b.Loop() {
		serverEnd, clientEnd := lsptest.Pipe()
		done := make(chan error, 1)
		go func() {
			done <- Serve(context.Background(), serverEnd, Config{Exit: func(int) {}, Getenv: noEnv, ConfigFile: "/nonexistent/config.toml",
				NewAgent: func(o agent.Options) (agent.Service, error) { return newFakeAgent(o), nil }})
		}()
		c := lsptest.Connect(clientEnd, lsptest.Hooks{})
		if err := c.Call(context.Background(), "initialize", map[string]any{"capabilities": map[string]any{}}, nil); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		c.Disconnect()
		<-done
		b.StartTimer()
	}
}

func noEnv(string) (string, bool) { return "", false }

// BenchmarkIdleMemory reports the heap an idle initialized server holds
// (with its agent built: the fake agent's own share is a few hundred
// bytes), and the same server with open buffers worth a 128k-token window
// (512 KB of text). The session itself is the agent's and is not counted.
func BenchmarkIdleMemory(b *testing.B) {
	const servers = 20
	for _, buffers := range []int{0, 128000 * 4} {
		b.Run(fmt.Sprintf("buffers=%dKB", buffers>>10), func(b *testing.B) {
			for b.Loop() {
				var hs []*harness
				heap0 := heapInUse()
				g0 := runtime.NumGoroutine()
				for range servers {
					h := start(b, harnessOptions{})
					h.initialized()
					if buffers > 0 {
						// 64 files of 8 KB each.
						for i := range 64 {
							openDoc(h, fmt.Sprintf("%s/f%d.go", h.root, i), strings.Repeat("x234567\n", buffers/64/8), 1)
						}
						h.sync()
					}
					hs = append(hs, h)
				}
				heap := heapInUse() - heap0
				goroutines := runtime.NumGoroutine() - g0
				b.ReportMetric(float64(heap)/servers/1024, "KB/server")
				b.ReportMetric(float64(goroutines)/servers, "goroutines/server")
				b.StopTimer()
				for _, h := range hs {
					h.c.Disconnect()
					<-h.served
					h.served <- nil
				}
				b.StartTimer()
			}
		})
	}
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
