package engine

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
	"github.com/reika-lsp/reika-lsp/agent/llm"
)

// downHarness is a client of an engine on a fixed address that a test
// stops and starts again, as a restarted llama-server comes back on its
// port.
type downHarness struct {
	t    *testing.T
	addr string
	opts enginetest.Options
	srv  *enginetest.Server
	c    *Client
	logs *logs
	hook loadLog // what the down hook was told
}

func newDownHarness(t *testing.T, opts enginetest.Options, wait time.Duration) *downHarness {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &downHarness{t: t, addr: l.Addr().String(), opts: opts, logs: &logs{}}
	l.Close()
	h.start()
	c, err := New(Config{BaseURL: "http://" + h.addr + "/v1", CacheDir: t.TempDir(), ModelsURL: "http://127.0.0.1:1/never",
		Logf: h.logs.logf, HTTPClient: testHTTP(t, nil), DownWait: wait})
	if err != nil {
		t.Fatal(err)
	}
	c.WatchDown(h.hook.add)
	h.c = c
	return h
}

// start starts the engine on the harness's address.
func (h *downHarness) start() {
	h.t.Helper()
	srv, err := enginetest.Listen(h.opts, h.addr)
	if err != nil {
		h.t.Fatal(err)
	}
	h.srv = srv
	h.t.Cleanup(srv.Close)
}

// TestCompletionWaitsForTheEngineToComeBack: the engine is killed between
// two requests; the next completion waits for it (said once in the log
// and through the hook), and goes on when it is back on its port.
func TestCompletionWaitsForTheEngineToComeBack(t *testing.T) {
	h := newDownHarness(t, enginetest.Options{Script: enginetest.Sequence(enginetest.Text("back"))}, 0)
	if _, err := h.c.Info(ctx(t)); err != nil {
		t.Fatal(err)
	}
	h.srv.Close()
	var sleeps []time.Duration
	h.c.sleep = func(ctx context.Context, d time.Duration) error {
		if sleeps = append(sleeps, d); len(sleeps) == 5 {
			h.start()
		}
		return ctx.Err()
	}
	var deltas []llm.Delta
	resp, err := h.c.Complete(ctx(t), userReq("go"), func(d llm.Delta) { deltas = append(deltas, d) })
	if err != nil || resp.Message.Content != "back" {
		t.Fatalf("resp %+v err %v", resp, err)
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second}
	if !equalDurations(sleeps, want) {
		t.Errorf("waits %v, want %v", sleeps, want)
	}
	if got := h.hook.get(); len(got) != 2 || !got[0] || got[1] {
		t.Errorf("the hook was told %v, want down then up", got)
	}
	if n := strings.Count(h.logs.String(), "engine unreachable, retrying"); n != 1 {
		t.Errorf("the wait is logged %d times, want once:\n%s", n, h.logs)
	}
	for _, d := range deltas {
		if d.Retract {
			t.Errorf("a retract although nothing streamed before the engine went away: %+v", deltas)
		}
	}
}

// TestTheWaitForTheEngineIsBounded: an engine that never comes back fails
// the completion after DownWait, as unreachable.
func TestTheWaitForTheEngineIsBounded(t *testing.T) {
	h := newDownHarness(t, enginetest.Options{}, 3*time.Second)
	h.srv.Close()
	var sleeps []time.Duration
	h.c.sleep = func(ctx context.Context, d time.Duration) error { sleeps = append(sleeps, d); return ctx.Err() }
	_, err := h.c.Complete(ctx(t), userReq("go"), nil)
	var u *llm.UnreachableError
	if !errors.As(err, &u) || !strings.Contains(err.Error(), "no answer for 3s") {
		t.Fatalf("err = %v", err)
	}
	if want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}; !equalDurations(sleeps, want) {
		t.Errorf("waits %v, want %v", sleeps, want)
	}
	if got := h.hook.get(); len(got) != 2 || !got[0] || got[1] {
		t.Errorf("the hook was told %v, want down then the end of the wait", got)
	}
}

// TestNoWaitWhenDownWaitIsNegative: DownWait < 0 fails at once.
func TestNoWaitWhenDownWaitIsNegative(t *testing.T) {
	h := newDownHarness(t, enginetest.Options{}, -1)
	h.srv.Close()
	var sleeps []time.Duration
	h.c.sleep = func(ctx context.Context, d time.Duration) error { sleeps = append(sleeps, d); return ctx.Err() }
	_, err := h.c.Complete(ctx(t), userReq("go"), nil)
	var u *llm.UnreachableError
	if !errors.As(err, &u) || len(sleeps) != 0 || len(h.hook.get()) != 0 {
		t.Errorf("err %v, waits %v, hook %v", err, sleeps, h.hook.get())
	}
}

// TestCancelEndsTheWaitForTheEngine: a cancel during the wait (real
// sleeps) ends the completion with the context's error.
func TestCancelEndsTheWaitForTheEngine(t *testing.T) {
	h := newDownHarness(t, enginetest.Options{}, time.Hour)
	h.srv.Close()
	c, cancel := context.WithCancel(ctx(t))
	var once sync.Once
	h.c.WatchDown(func(down bool) {
		if down {
			once.Do(cancel)
		}
	})
	_, err := h.c.Complete(c, userReq("go"), nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want the cancel", err)
	}
}

// TestABrokenStreamIsRetracted: a stream cut mid-way is asked again; the
// text it streamed is retracted before the next try's, and when that try
// finds the engine down, the one after it streams the whole reply.
func TestABrokenStreamIsRetracted(t *testing.T) {
	long := enginetest.Reply{Content: strings.Repeat("A reply long enough to stream in several chunks. ", 6)}
	broken := long
	broken.Fault = enginetest.Fault{Reset: true, AfterChunks: 3}
	h := newHarness(t, enginetest.Options{Script: enginetest.Sequence(broken, enginetest.Reply{Fault: enginetest.Fault{Status: 502}}, long)})
	resp, deltas, err := h.ask(userReq("go"))
	if err != nil || resp.Message.Content != long.Content {
		t.Fatalf("resp %+v err %v", resp, err)
	}
	last := -1
	for i, d := range deltas {
		if d.Retract {
			last = i
		}
	}
	if last <= 0 {
		t.Fatalf("no retract after the broken text: %+v", deltas)
	}
	var after strings.Builder
	for _, d := range deltas[last+1:] {
		after.WriteString(d.Content)
	}
	if after.String() != long.Content {
		t.Errorf("after the retract the transcript gets %q, want the whole reply", after.String())
	}
	recs := h.srv.Requests()
	if len(recs) != 3 || !recs[0].Request.Stream || recs[1].Request.Stream || !recs[2].Request.Stream {
		t.Errorf("%d requests; want stream, the re-ask without streaming, then a stream once the engine answers", len(recs))
	}
}

// TestProbeAsksTheEngine: Info answers from its cache while the engine is
// down; Probe does not.
func TestProbeAsksTheEngine(t *testing.T) {
	h := newDownHarness(t, enginetest.Options{}, -1)
	if _, err := h.c.Info(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if err := h.c.Probe(ctx(t)); err != nil {
		t.Fatalf("Probe with the engine up: %v", err)
	}
	h.srv.Close()
	if _, err := h.c.Info(ctx(t)); err != nil {
		t.Logf("Info asked the engine again: %v", err)
	}
	var u *llm.UnreachableError
	if err := h.c.Probe(ctx(t)); !errors.As(err, &u) {
		t.Fatalf("Probe with the engine down: %v", err)
	}
	// Something on the port that drops every connection is no answer.
	l, err := net.Listen("tcp", h.addr)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	if err := h.c.Probe(ctx(t)); !errors.As(err, &u) {
		t.Errorf("Probe of a port that drops connections: %v", err)
	}
	l.Close()
	h.start()
	if err := h.c.Probe(ctx(t)); err != nil {
		t.Errorf("Probe with the engine back: %v", err)
	}
}
