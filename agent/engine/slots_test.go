package engine

import (
	"runtime"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
)

// idSlots are the id_slot of each request the server got (-1: none).
func idSlots(t *testing.T, srv *enginetest.Server) []int {
	var out []int
	for _, rec := range srv.Requests() {
		got, sent := body(t, rec)["id_slot"]
		if !sent {
			out = append(out, -1)
			continue
		}
		out = append(out, int(got.(float64)))
	}
	return out
}

// TestSlotPins: on llama.cpp with several slots the session's requests
// name one slot from the first on, but for the first after a subagent's
// (restored from host memory where the slots share a KV cache), and a
// subagent's another (the last);
// with one slot, or on another engine, no request names a slot. The slots
// are asked for once.
func TestSlotPins(t *testing.T) {
	for _, tc := range []struct {
		shape   string
		slots   int
		session int // id_slot of the session's requests; -1: none
		sub     int
	}{
		{enginetest.ShapeLlamaCpp, 2, 0, 1},
		{enginetest.ShapeLlamaCpp2025, 4, 0, 3},
		{enginetest.ShapeLlamaCpp, 1, -1, -1},
		{enginetest.ShapeVLLM, 2, -1, -1},
		{enginetest.ShapeHosted, 2, -1, -1},
	} {
		t.Run(tc.shape, func(t *testing.T) {
			h := newHarness(t, enginetest.Options{Shape: tc.shape, Slots: tc.slots})
			subs := []bool{false, true, true, false, false}
			for _, sub := range subs {
				req := userReq("hello")
				req.Subagent = sub
				if _, _, err := h.ask(req); err != nil {
					t.Fatal(err)
				}
			}
			for i, got := range idSlots(t, h.srv) {
				want := map[bool]int{false: tc.session, true: tc.sub}[subs[i]]
				if i == 3 {
					want = -1 // the first after a subagent's names none
				}
				if got != want {
					t.Errorf("request %d (subagent %v): id_slot %d, want %d", i, subs[i], got, want)
				}
			}
			props := 0
			for _, c := range h.srv.Calls() {
				if c == "GET /props" {
					props++
				}
			}
			if llama := strings.HasPrefix(tc.shape, enginetest.ShapeLlamaCpp); llama && props != 1 {
				t.Errorf("GET /props %d times: %v", props, h.srv.Calls())
			}
			if tc.session >= 0 && !strings.Contains(h.logs.String(), "this session's requests go to slot 0") {
				t.Errorf("log:\n%s", h.logs)
			}
		})
	}
}

// window is a client of srv with its own log, sharing cache (so the
// slot locks) with the other windows of a test.
func window(t *testing.T, srv *enginetest.Server, cache string) (*Client, *logs) {
	l := &logs{}
	c, err := New(Config{BaseURL: srv.URL(), CacheDir: cache, ModelsURL: "http://127.0.0.1:1/never", Logf: l.logf, HTTPClient: testHTTP(t, nil)})
	if err != nil {
		t.Fatal(err)
	}
	return c, l
}

// askSlot sends a request of c's session (or a subagent's) and returns
// the id_slot it named (-1: none) and what the engine reused of it.
func askSlot(t *testing.T, srv *enginetest.Server, c *Client, text string, sub bool) (slot, cached int) {
	t.Helper()
	req := userReq(text)
	req.Subagent = sub
	resp, err := c.Complete(ctx(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := idSlots(t, srv)
	return s[len(s)-1], resp.Usage.CachedTokens
}

// TestSlotsOfTwoWindows: sessions sharing a cache directory (two editor
// windows) on one server take different slots; a request after the other
// window's names none and its pin stays where the server served it; a
// subagent with no free slot shares its session's; a third window on a
// two-slot server shares one and says so; a closed session's slot goes to
// the next.
func TestSlotsOfTwoWindows(t *testing.T) {
	srv := enginetest.New(enginetest.Options{Slots: 2})
	t.Cleanup(srv.Close)
	cache := t.TempDir()
	ask := func(c *Client, text string, sub bool) int {
		t.Helper()
		slot, _ := askSlot(t, srv, c, text, sub)
		return slot
	}
	a, _ := window(t, srv, cache)
	b, _ := window(t, srv, cache)
	if sa, sb := ask(a, "window a", false), ask(b, "window b", false); sa != 0 || sb != 1 {
		t.Fatalf("two windows took slots %d and %d, want 0 and 1", sa, sb)
	}
	if s1, s2 := ask(a, "window a", false), ask(a, "window a", false); s1 != -1 || s2 != 0 {
		t.Errorf("after the other window's request: slot %d, then %d; want none, then 0", s1, s2)
	}
	if got := ask(a, "a subagent of a", true); got != 0 {
		t.Errorf("a subagent with no free slot went to slot %d, want its session's 0", got)
	}
	c, cl := window(t, srv, cache)
	if got := ask(c, "window c", false); got < 0 || !strings.Contains(cl.String(), "held by other reika-lsp sessions") {
		t.Errorf("a third window on two slots: slot %d; log:\n%s", got, cl)
	}
	a.Close()
	d, _ := window(t, srv, cache)
	if got := ask(d, "window d", false); got != 0 {
		t.Errorf("after the first window closed, a new one took slot %d, want 0", got)
	}
	// A Client no longer reachable frees its slot (a cleanup closes the
	// lock): b and c are windows still open until here.
	runtime.KeepAlive(b)
	runtime.KeepAlive(c)
}

// TestSlotFollowsRestore: on llama-server's default slots (4, one KV
// cache) a subagent's task clears the session's slot; the session's next
// request names none, is restored from host memory into another slot, and
// the session's requests name that slot from then on.
func TestSlotFollowsRestore(t *testing.T) {
	srv := enginetest.New(enginetest.Options{Slots: enginetest.DefaultSlots, KVUnified: true})
	t.Cleanup(srv.Close)
	a, l := window(t, srv, t.TempDir())
	first, _ := askSlot(t, srv, a, "the session's task", false)
	sub, _ := askSlot(t, srv, a, "a subagent's task", true)
	after, cached := askSlot(t, srv, a, "the session's task", false)
	next, _ := askSlot(t, srv, a, "the session's task", false)
	recs := srv.Requests()
	t.Logf("slots %d, %d (subagent), %d, %d; the request after the subagent's reused %d of %d", first, sub, after, next, cached, recs[2].PromptTokens)
	if first != 0 || sub != 3 || after != -1 || next != recs[2].Slot || cached < recs[0].PromptTokens/2 {
		t.Errorf("slots %d, %d, %d, %d (the third served from %d), reused %d; want 0, 3, none, the third's, most of the prompt\n%s",
			first, sub, after, next, recs[2].Slot, cached, l)
	}
}
