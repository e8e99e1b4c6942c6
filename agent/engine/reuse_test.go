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
