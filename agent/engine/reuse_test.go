package engine

import (
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/enginetest"
)

// TestCacheReuseSent: n_cache_reuse goes to llama.cpp only, with the size
// the setting asks for (auto: DefaultCacheReuse; off: 0), never with
// CacheReuseServer, and the response says what was asked.
func TestCacheReuseSent(t *testing.T) {
	shapes := []string{enginetest.ShapeLlamaCpp, enginetest.ShapeLlamaCpp2025, enginetest.ShapeVLLM, enginetest.ShapeHosted, enginetest.ShapeOllama, enginetest.ShapeLMStudio}
	for _, setting := range []struct {
		name string
		n    int
		want float64
		none bool // never sent
	}{{"auto", agent.CacheReuseAuto, DefaultCacheReuse, false}, {"off", agent.CacheReuseOff, 0, false}, {"32", 32, 32, false},
		{"server", CacheReuseServer, 0, true}} {
		for _, shape := range shapes {
			t.Run(setting.name+"/"+shape, func(t *testing.T) {
				h := newHarness(t, enginetest.Options{Shape: shape}, func(c *Config) { c.CacheReuse = setting.n })
				resp, _, err := h.ask(userReq("hello"))
				if err != nil {
					t.Fatal(err)
				}
				b := body(t, h.srv.Requests()[0])
				got, sent := b["n_cache_reuse"]
				llama := strings.HasPrefix(shape, enginetest.ShapeLlamaCpp) && !setting.none
				if sent != llama || llama && got != setting.want {
					t.Errorf("n_cache_reuse %v (sent %v) to %s", got, sent, shape)
				}
				if want := int(setting.want); !llama && resp.CacheReuse != 0 || llama && resp.CacheReuse != want {
					t.Errorf("response says %d was asked", resp.CacheReuse)
				}
			})
		}
	}
}

// TestSubagentSlot: on llama.cpp with several slots a subagent's requests
// are pinned to the last slot and the session's are not; with one slot, or
// on another engine, nothing is pinned. The slots are asked for once.
func TestSubagentSlot(t *testing.T) {
	for _, tc := range []struct {
		shape string
		slots int
		want  any // id_slot of the subagent's request; nil: none
	}{
		{enginetest.ShapeLlamaCpp, 2, float64(1)},
		{enginetest.ShapeLlamaCpp2025, 4, float64(3)},
		{enginetest.ShapeLlamaCpp, 1, nil},
		{enginetest.ShapeVLLM, 2, nil},
	} {
		t.Run(tc.shape, func(t *testing.T) {
			h := newHarness(t, enginetest.Options{Shape: tc.shape, Slots: tc.slots})
			for _, sub := range []bool{false, true, true, false} {
				req := userReq("hello")
				req.Subagent = sub
				if _, _, err := h.ask(req); err != nil {
					t.Fatal(err)
				}
			}
			recs := h.srv.Requests()
			for i, rec := range recs {
				got, sent := body(t, rec)["id_slot"]
				if sub := i == 1 || i == 2; sub && (got != tc.want || sent != (tc.want != nil)) || !sub && sent {
					t.Errorf("request %d (subagent %v): id_slot %v", i, sub, got)
				}
			}
			props := 0
			for _, c := range h.srv.Calls() {
				if c == "GET /props" {
					props++
				}
			}
			if llama := strings.HasPrefix(tc.shape, enginetest.ShapeLlamaCpp); llama && props > 2 {
				t.Errorf("GET /props %d times: %v", props, h.srv.Calls())
			}
			if tc.want != nil && !strings.Contains(h.logs.String(), "subagents use slot") {
				t.Errorf("log:\n%s", h.logs)
			}
		})
	}
}
