package main

import (
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/engine"
	"github.com/reika-lsp/reika-lsp/agent/llm"
)

// TestEngineConfig carries the settings into the engine client's config.
func TestEngineConfig(t *testing.T) {
	s, err := agent.LoadSettings(agent.SettingsSource{
		Editor: []byte(`{"contextWindow": 24000, "model": "qwen3", "cacheReuse": "off"}`),
		Getenv: func(k string) (string, bool) {
			v, ok := map[string]string{"REIKA_BASE_URL": "http://10.0.0.2:8000/v1", "REIKA_API_KEY": "sk-x"}[k]
			return v, ok
		},
		ConfigFile: "/nonexistent/config.toml",
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := engineConfig(s)
	if cfg.BaseURL != "http://10.0.0.2:8000/v1" || cfg.APIKey != "sk-x" || cfg.Model != "qwen3" || cfg.ContextWindow != 24000 || cfg.ModelsURL != llm.DefaultModelsURL ||
		cfg.CacheReuse != engine.CacheReuseOff || cfg.BaseURLFrom != "env" {
		t.Errorf("config %+v", cfg)
	}
}
