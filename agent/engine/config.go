package engine

import (
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/reika-lsp/reika-lsp/agent/llm"
)

// Config configures a Client.
type Config struct {
	// BaseURL is the OpenAI-compatible base URL, e.g.
	// http://127.0.0.1:8080/v1 (llama-server's default); "" means
	// llm.DefaultBaseURL.
	BaseURL string
	// BaseURLFrom is where BaseURL came from, as the agent's Settings.Sources
	// says ("editor", "env", "profile NAME"; "" for the default): an
	// unreachable engine's hint names the setting to change there.
	BaseURLFrom string
	// APIKey is sent as a bearer token. It never appears in a log line or
	// an error.
	APIKey string
	// Model is the model id to request; "" means the endpoint's only model
	// (an error names the models when it serves several).
	Model string
	// ContextWindow is the window from the setting, the environment or the
	// profile; > 0 wins over discovery (source "setting").
	ContextWindow int
	// ModelsURL is the models.dev catalog URL (REIKA_MODELS_URL); "" means
	// llm.DefaultModelsURL.
	ModelsURL string
	// CacheDir is where the catalog is cached; "" means reika in the user
	// cache directory (os.UserCacheDir: $XDG_CACHE_HOME, else ~/.cache, on
	// Linux), or in the temp dir when there is none.
	CacheDir string
	// CatalogMaxAge is how long the cached catalog is used before a fresh
	// download; 0 means DefaultCatalogMaxAge.
	CatalogMaxAge time.Duration
	// HTTPClient makes every request; nil means a client of its own. Set no
	// Timeout on it: completions stream for as long as the model writes.
	HTTPClient *http.Client
	// Retry bounds the retries of 429, 5xx and dropped connections.
	Retry Retry
	// LoadWait bounds the wait for an engine that answers 503 "Loading
	// model" (llama-server while it loads); 0 means DefaultLoadWait.
	LoadWait time.Duration
	// DownWait bounds the wait of a completion for an engine that does not
	// answer (refused or dropped connections, 502, 503, 504; see down.go);
	// 0 means DefaultDownWait, a negative value not to wait (those are then
	// retried a bounded few times, as 429 and 500 are).
	DownWait time.Duration
	// CacheReuse is the cacheReuse setting: CacheReuseAuto (0) asks
	// llama.cpp for DefaultCacheReuse, CacheReuseOff for none
	// (n_cache_reuse 0), CacheReuseServer sends nothing, a positive number
	// asks for that chunk size. Other engines are never sent n_cache_reuse.
	CacheReuse int
	// Logf writes a log line; nil discards. Lines never hold the API key.
	Logf func(format string, args ...any)
}

// withDefaults is cfg with every zero field that has a default (BaseURL,
// ModelsURL, CacheDir, CatalogMaxAge, Retry, LoadWait, DownWait) set to it. It
// checks nothing.
func (cfg Config) withDefaults() Config {
	if cfg.BaseURL == "" {
		cfg.BaseURL = llm.DefaultBaseURL
	}
	if cfg.ModelsURL == "" {
		cfg.ModelsURL = llm.DefaultModelsURL
	}
	if cfg.CacheDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			dir = os.TempDir()
		}
		cfg.CacheDir = filepath.Join(dir, "reika")
	}
	if cfg.CatalogMaxAge <= 0 {
		cfg.CatalogMaxAge = DefaultCatalogMaxAge
	}
	if cfg.Retry.Attempts <= 0 {
		cfg.Retry.Attempts = 3
	}
	if cfg.Retry.Base <= 0 {
		cfg.Retry.Base = 500 * time.Millisecond
	}
	if cfg.Retry.Max <= 0 {
		cfg.Retry.Max = 30 * time.Second
	}
	if cfg.LoadWait <= 0 {
		cfg.LoadWait = DefaultLoadWait
	}
	if cfg.DownWait == 0 {
		cfg.DownWait = DefaultDownWait
	}
	return cfg
}
