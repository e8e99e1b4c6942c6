package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/reika-lsp/reika-lsp/agent/llm"
)

// Settings are the user's settings (DESIGN.md §5), resolved with the
// precedence editor > REIKA_* environment > active profile > defaults.
type Settings struct {
	BaseURL         string `json:"baseUrl"`
	Model           string `json:"model"`
	APIKeyEnv       string `json:"apiKeyEnv"`
	Profile         string `json:"profile"`
	ContextWindow   int    `json:"contextWindow"`
	MinGenTokens    int    `json:"minGenTokens"`
	MaxTokens       int    `json:"maxTokens"`
	RepoMapBudget   int    `json:"repoMapBudget"`
	ReasoningRounds int    `json:"reasoningRounds"`
	Minimal         bool   `json:"minimal"`
	Debug           bool   `json:"debug"`
	Approve         string `json:"approve"`
	ModelsURL       string `json:"modelsUrl"`
	// CacheReuse is the smallest chunk, in tokens, that llama.cpp may reuse
	// from its cache after the first difference between two requests
	// (n_cache_reuse): CacheReuseAuto (the setting "auto", the default)
	// lets the engine client choose, CacheReuseOff ("off") asks for none,
	// a positive number is that size. Other engines are never sent it.
	CacheReuse int `json:"cacheReuse"`

	// APIKey is the resolved key (REIKA_API_KEY, or the variable apiKeyEnv
	// names). It is never logged, printed or marshaled.
	APIKey string `json:"-"`
	// Sources says where each non-default setting came from: "editor",
	// "env", "profile NAME" or "default", keyed by the setting's name.
	Sources map[string]string `json:"-"`
	// KeyEnvs are the variables the config file names as keys (apiKeyEnv
	// of any profile), besides APIKeyEnv: none of them reaches a tool
	// process (see SecretEnv).
	KeyEnvs []string `json:"-"`
}

// SecretEnv names the variables that may hold a key: REIKA_API_KEY, the
// variable apiKeyEnv names and every one the config file names. They are
// kept out of every tool process's environment.
func (s Settings) SecretEnv() []string {
	names := []string{"REIKA_API_KEY"}
	if s.APIKeyEnv != "" {
		names = append(names, s.APIKeyEnv)
	}
	return append(names, s.KeyEnvs...)
}

// Setting defaults.
const (
	DefaultProfile         = "default"
	DefaultReasoningRounds = 2
	ApproveAsk             = "ask"
	ApproveEdits           = "edits"
	ApproveAll             = "all"
	// CacheReuseAuto and CacheReuseOff are the settings "auto" and "off"
	// of cacheReuse (REIKA_CACHE_REUSE).
	CacheReuseAuto = 0
	CacheReuseOff  = -1
)

// settingKeys maps each setting to its environment variable, in the order
// of DESIGN.md §5.
var settingKeys = []struct{ name, env string }{
	{"baseUrl", "REIKA_BASE_URL"},
	{"model", "REIKA_MODEL"},
	{"apiKeyEnv", ""},
	{"profile", "REIKA_PROFILE"},
	{"contextWindow", "REIKA_CONTEXT_WINDOW"},
	{"minGenTokens", "REIKA_MIN_GEN_TOKENS"},
	{"maxTokens", "REIKA_MAX_TOKENS"},
	{"repoMapBudget", "REIKA_REPO_MAP_BUDGET"},
	{"reasoningRounds", "REIKA_REASONING_ROUNDS"},
	{"minimal", "REIKA_MINIMAL"},
	{"debug", "REIKA_DEBUG"},
	{"approve", "REIKA_APPROVE"},
	{"modelsUrl", "REIKA_MODELS_URL"},
	{"cacheReuse", "REIKA_CACHE_REUSE"},
}

// SettingNames lists every setting key (DESIGN.md §5), in order.
func SettingNames() []string {
	names := make([]string, len(settingKeys))
	for i, k := range settingKeys {
		names[i] = k.name
	}
	return names
}

// EnvName returns the REIKA_* variable of a setting, "" when it has none.
func EnvName(setting string) string {
	for _, k := range settingKeys {
		if k.name == setting {
			return k.env
		}
	}
	return ""
}

// SettingsSource is where LoadSettings reads from. Zero fields are skipped.
type SettingsSource struct {
	// Editor is the "reika" object of initializationOptions or of
	// workspace/configuration. JSON null and [] (Neovim's empty table) mean
	// no settings.
	Editor json.RawMessage
	// Getenv reads the environment; nil means os.LookupEnv.
	Getenv func(string) (string, bool)
	// ConfigFile is the TOML file with [profiles.NAME]; "" means
	// $XDG_CONFIG_HOME/reika/config.toml. A missing file is not an error.
	ConfigFile string
}

// ConfigFilePath is the default config file location.
func ConfigFilePath() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "reika", "config.toml")
}

// LoadSettings resolves the settings. Bad values are errors that name the
// setting and where it came from; nothing is silently ignored.
func LoadSettings(src SettingsSource) (Settings, error) {
	getenv := src.Getenv
	if getenv == nil {
		getenv = os.LookupEnv
	}
	editor, err := decodeObject(src.Editor)
	if err != nil {
		return Settings{}, fmt.Errorf("editor settings: %w", err)
	}
	for k := range editor {
		if !knownSetting(k) {
			return Settings{}, fmt.Errorf("editor settings: unknown setting %q (known: %s)", k, strings.Join(SettingNames(), ", "))
		}
	}

	// The profile name itself follows editor > env > default.
	profile := DefaultProfile
	if v, ok := getenv("REIKA_PROFILE"); ok && v != "" {
		profile = v
	}
	if v, ok := editor["profile"]; ok {
		s, ok := v.(string)
		if !ok || s == "" {
			return Settings{}, fmt.Errorf("editor setting profile: want a non-empty string, got %v", v)
		}
		profile = s
	}
	path := src.ConfigFile
	if path == "" {
		path = ConfigFilePath()
	}
	prof, keyEnvs, err := loadProfile(path, profile)
	if err != nil {
		return Settings{}, err
	}

	s := Settings{
		BaseURL:         llm.DefaultBaseURL,
		Profile:         profile,
		ReasoningRounds: DefaultReasoningRounds,
		Approve:         ApproveAsk,
		ModelsURL:       llm.DefaultModelsURL,
		Sources:         map[string]string{},
		KeyEnvs:         keyEnvs,
	}
	// Apply layers from lowest to highest precedence.
	for k, v := range prof {
		if err := s.set(k, v, "profile "+profile); err != nil {
			return Settings{}, fmt.Errorf("%s: %w", path, err)
		}
	}
	for _, k := range settingKeys {
		if k.env == "" {
			continue
		}
		if v, ok := getenv(k.env); ok && v != "" {
			if err := s.set(k.name, v, "env"); err != nil {
				return Settings{}, fmt.Errorf("%s: %w", k.env, err)
			}
		}
	}
	for k, v := range editor {
		if err := s.set(k, v, "editor"); err != nil {
			return Settings{}, fmt.Errorf("editor setting %w", err)
		}
	}
	s.Profile = profile

	// The key: REIKA_API_KEY, or the variable apiKeyEnv names.
	if v, ok := getenv("REIKA_API_KEY"); ok {
		s.APIKey = v
	}
	if s.APIKeyEnv != "" {
		v, ok := getenv(s.APIKeyEnv)
		if !ok {
			return Settings{}, fmt.Errorf("setting apiKeyEnv names %s, which is not set", s.APIKeyEnv)
		}
		s.APIKey = v
	}
	return s, nil
}

func knownSetting(name string) bool {
	for _, k := range settingKeys {
		if k.name == name {
			return true
		}
	}
	return false
}

// decodeObject decodes a JSON object; null, absent and [] are empty.
func decodeObject(raw json.RawMessage) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '[' {
		var arr []any
		if err := json.Unmarshal(raw, &arr); err != nil {
			return nil, err
		}
		if len(arr) != 0 {
			return nil, errors.New("want an object, got a non-empty array")
		}
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("want an object: %w", err)
	}
	return m, nil
}

// loadProfile reads the profile name of the config file at path, and the
// variables any of its profiles names as apiKeyEnv.
func loadProfile(path, name string) (map[string]any, []string, error) {
	if path == "" {
		return nil, nil, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var cfg struct {
		Profiles map[string]map[string]any `toml:"profiles"`
	}
	if _, err := toml.Decode(string(data), &cfg); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	var keyEnvs []string
	for _, p := range cfg.Profiles {
		if v, ok := p["apiKeyEnv"].(string); ok && v != "" {
			keyEnvs = append(keyEnvs, v)
		}
	}
	slices.Sort(keyEnvs)
	prof, ok := cfg.Profiles[name]
	if !ok {
		if name == DefaultProfile {
			return nil, keyEnvs, nil
		}
		return nil, nil, fmt.Errorf("%s: no [profiles.%s]", path, name)
	}
	for k := range prof {
		if !knownSetting(k) {
			return nil, nil, fmt.Errorf("%s: [profiles.%s]: unknown setting %q", path, name, k)
		}
	}
	return prof, keyEnvs, nil
}

// set assigns one setting from a JSON, TOML or environment value.
func (s *Settings) set(name string, v any, from string) error {
	str := func() (string, error) {
		switch x := v.(type) {
		case string:
			return x, nil
		}
		return "", fmt.Errorf("%s: want a string, got %v", name, v)
	}
	num := func(min int) (int, error) {
		var n int
		switch x := v.(type) {
		case float64:
			if x != float64(int(x)) {
				return 0, fmt.Errorf("%s: want a whole number, got %v", name, x)
			}
			n = int(x)
		case int64:
			n = int(x)
		case int:
			n = x
		case string:
			i, err := strconv.Atoi(strings.TrimSpace(x))
			if err != nil {
				return 0, fmt.Errorf("%s: want a whole number, got %q", name, x)
			}
			n = i
		default:
			return 0, fmt.Errorf("%s: want a whole number, got %v", name, v)
		}
		if n < min {
			return 0, fmt.Errorf("%s: want at least %d, got %d", name, min, n)
		}
		return n, nil
	}
	boolean := func() (bool, error) {
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			switch strings.ToLower(strings.TrimSpace(x)) {
			case "1", "true", "yes", "on":
				return true, nil
			case "0", "false", "no", "off", "":
				return false, nil
			}
		}
		return false, fmt.Errorf("%s: want true or false, got %v", name, v)
	}
	var err error
	switch name {
	case "baseUrl":
		s.BaseURL, err = str()
		s.BaseURL = strings.TrimRight(s.BaseURL, "/")
	case "model":
		s.Model, err = str()
	case "apiKeyEnv":
		s.APIKeyEnv, err = str()
	case "profile":
		_, err = str() // resolved before the layers
	case "contextWindow":
		s.ContextWindow, err = num(0)
	case "minGenTokens":
		s.MinGenTokens, err = num(0)
	case "maxTokens":
		s.MaxTokens, err = num(0)
	case "repoMapBudget":
		s.RepoMapBudget, err = num(0)
	case "reasoningRounds":
		s.ReasoningRounds, err = num(0)
	case "minimal":
		s.Minimal, err = boolean()
	case "debug":
		s.Debug, err = boolean()
	case "approve":
		s.Approve, err = str()
		if err == nil && s.Approve != ApproveAsk && s.Approve != ApproveEdits && s.Approve != ApproveAll {
			err = fmt.Errorf("approve: want ask, edits or all, got %q", s.Approve)
		}
	case "modelsUrl":
		s.ModelsURL, err = str()
	case "cacheReuse":
		s.CacheReuse, err = cacheReuse(v)
	default:
		err = fmt.Errorf("unknown setting %q", name)
	}
	if err != nil {
		return err
	}
	s.Sources[name] = from
	return nil
}

// cacheReuse parses the cacheReuse setting: "auto", "off", or a chunk size
// of at least 1 token (a JSON or TOML number, or its digits).
func cacheReuse(v any) (int, error) {
	bad := fmt.Errorf("cacheReuse: want auto, off or a chunk size in tokens, got %v", v)
	switch x := v.(type) {
	case string:
		switch t := strings.ToLower(strings.TrimSpace(x)); t {
		case "auto", "":
			return CacheReuseAuto, nil
		case "off":
			return CacheReuseOff, nil
		default:
			n, err := strconv.Atoi(t)
			if err != nil || n < 1 {
				return 0, bad
			}
			return n, nil
		}
	case float64:
		if x < 1 || x != float64(int(x)) {
			return 0, bad
		}
		return int(x), nil
	case int64:
		if x < 1 {
			return 0, bad
		}
		return int(x), nil
	case int:
		if x < 1 {
			return 0, bad
		}
		return x, nil
	}
	return 0, bad
}
