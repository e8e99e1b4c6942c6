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

// Settings are the user's settings (docs/design.md §5), resolved with the
// precedence editor > REIKA_* environment > active profile > defaults.
// One field a setting of the table below (and Sources), hence more than
// fifteen.
type Settings struct {
	BaseURL         string `json:"baseUrl"`
	Model           string `json:"model"`
	APIKeyEnv       string `json:"apiKeyEnv"`
	APIKeyFile      string `json:"apiKeyFile"`
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
	// FetchAllowHosts are hosts, comma-separated, that fetch_url may reach
	// although they are (or resolve to) link-local or private addresses.
	FetchAllowHosts string `json:"fetchAllowHosts"`
	// CacheReuse is the smallest chunk, in tokens, that llama.cpp may reuse
	// from its cache after the first difference between two requests
	// (n_cache_reuse): CacheReuseAuto (the setting "auto", the default)
	// lets the engine client choose, CacheReuseOff ("off") asks for none,
	// a positive number is that size. Other engines are never sent it.
	CacheReuse int `json:"cacheReuse"`
	// Mode is the mode new sessions start in and a session switches to
	// (modes.go): code, plan, ask or a custom mode's name.
	Mode string `json:"mode"`
	// EngineRetry is how long, in seconds, a request waits for an engine
	// that does not answer (refused, dropped, 502/503/504) before the turn
	// fails; 0 set explicitly means not to wait, unset (Sources has no
	// "engineRetry") DefaultEngineRetry.
	EngineRetry int `json:"engineRetry"`
	// MCPAllow names the MCP servers (SERVER or mcp__SERVER) and tools
	// (mcp__SERVER__TOOL) whose calls run without asking under ask and
	// edits.
	MCPAllow []string `json:"mcpAllow"`

	// APIKey is the resolved key (the file apiKeyFile names, else the
	// variable apiKeyEnv names, else REIKA_API_KEY). It is never logged,
	// printed or marshaled.
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
	// DefaultEngineRetry is engineRetry's default, in seconds.
	DefaultEngineRetry = 120
)

// setting is one row of the settings table: the key of the editor's
// settings object and of the config file's profiles, the REIKA_* variable
// that sets it ("" for none), the default and the advice the README's
// settings table shows, and how a value of any layer (JSON, TOML or the
// environment's text) is put into Settings.
type setting struct {
	name string
	env  string
	// envDoc is the variable column of the README's table when it is not
	// env (apiKeyEnv is read through the variable it names, the key
	// itself through REIKA_API_KEY).
	envDoc string
	// nameDoc follows the name in the README's setting column, where the
	// name alone would mislead.
	nameDoc string
	def     string // the README's default column
	doc     string // the README's "when to touch it" column
	set     func(s *Settings, v any) error
}

// settingsTable is every setting, in the order of docs/design.md §5. The
// environment names, the config keys, LoadSettings and the README's table
// come from it (TestSettingsDocs checks the README and both editors
// against it).
var settingsTable = []setting{
	{name: "baseUrl", env: "REIKA_BASE_URL", def: "`" + llm.DefaultBaseURL + "`", doc: "your engine is elsewhere",
		set: func(s *Settings, v any) (err error) {
			s.BaseURL, err = stringValue("baseUrl", v)
			s.BaseURL = strings.TrimRight(s.BaseURL, "/")
			return err
		}},
	{name: "model", env: "REIKA_MODEL", def: "the endpoint's only model", doc: "the endpoint serves several",
		set: func(s *Settings, v any) (err error) { s.Model, err = stringValue("model", v); return err }},
	{name: "apiKeyEnv", envDoc: "REIKA_API_KEY", nameDoc: "the name of a variable holding the key", def: "none", doc: "hosted endpoints; never logged",
		set: func(s *Settings, v any) (err error) { s.APIKeyEnv, err = stringValue("apiKeyEnv", v); return err }},
	{name: "apiKeyFile", env: "REIKA_API_KEY_FILE", nameDoc: "a file holding the key, read at startup", def: "none", doc: "keep the key out of every environment (wins over the variables)",
		set: func(s *Settings, v any) (err error) { s.APIKeyFile, err = stringValue("apiKeyFile", v); return err }},
	{name: "profile", env: "REIKA_PROFILE", def: "`" + DefaultProfile + "`", doc: "switch between config profiles",
		// resolved before the layers (LoadSettings): only checked here
		set: func(s *Settings, v any) error { _, err := stringValue("profile", v); return err }},
	{name: "contextWindow", env: "REIKA_CONTEXT_WINDOW", def: "discovered", doc: "the engine reports nothing, or you want less than it has",
		set: func(s *Settings, v any) (err error) {
			s.ContextWindow, err = countValue("contextWindow", v)
			return err
		}},
	{name: "minGenTokens", env: "REIKA_MIN_GEN_TOKENS", def: "learned (starts at 2048)", doc: "a thinking model on a small window is cut off before the reserve has learned",
		set: func(s *Settings, v any) (err error) { s.MinGenTokens, err = countValue("minGenTokens", v); return err }},
	{name: "maxTokens", env: "REIKA_MAX_TOKENS", def: "none", doc: "cap every reply",
		set: func(s *Settings, v any) (err error) { s.MaxTokens, err = countValue("maxTokens", v); return err }},
	{name: "repoMapBudget", env: "REIKA_REPO_MAP_BUDGET", def: "5% of the window, 3200–12000 chars", doc: "the map takes room the task needs",
		set: func(s *Settings, v any) (err error) {
			s.RepoMapBudget, err = countValue("repoMapBudget", v)
			return err
		}},
	{name: "reasoningRounds", env: "REIKA_REASONING_ROUNDS", def: strconv.Itoa(DefaultReasoningRounds), doc: "only with no known window: rounds that keep their reasoning",
		set: func(s *Settings, v any) (err error) {
			s.ReasoningRounds, err = countValue("reasoningRounds", v)
			return err
		}},
	{name: "minimal", env: "REIKA_MINIMAL", def: "false", doc: "drop the repo map, the skill list and the instruction files on tiny windows",
		set: func(s *Settings, v any) (err error) { s.Minimal, err = boolValue("minimal", v); return err }},
	{name: "debug", env: "REIKA_DEBUG", def: "false", doc: "log one prefix-cache line per round: append, or where it diverged and what the engine reprocessed",
		set: func(s *Settings, v any) (err error) { s.Debug, err = boolValue("debug", v); return err }},
	{name: "approve", env: "REIKA_APPROVE", def: "`" + ApproveAsk + "`", doc: "`edits` allows file edits, `all` everything inside the workspace",
		set: func(s *Settings, v any) (err error) {
			s.Approve, err = stringValue("approve", v)
			if err == nil && s.Approve != ApproveAsk && s.Approve != ApproveEdits && s.Approve != ApproveAll {
				err = fmt.Errorf("approve: want ask, edits or all, got %q", s.Approve)
			}
			return err
		}},
	{name: "modelsUrl", env: "REIKA_MODELS_URL", def: "`" + llm.DefaultModelsURL + "`", doc: "the catalog of hosted models' windows (never asked for local hosts)",
		set: func(s *Settings, v any) (err error) { s.ModelsURL, err = stringValue("modelsUrl", v); return err }},
	{name: "fetchAllowHosts", env: "REIKA_FETCH_ALLOW_HOSTS", def: "none", doc: "fetch_url must reach a private or link-local host (comma-separated names or addresses)",
		set: func(s *Settings, v any) (err error) {
			s.FetchAllowHosts, err = stringValue("fetchAllowHosts", v)
			return err
		}},
	{name: "cacheReuse", env: "REIKA_CACHE_REUSE", def: "`auto` (8)", doc: "llama.cpp only: the smallest chunk of its cache it may shift into place after a change (`off`: none; see KV shifting)",
		set: func(s *Settings, v any) (err error) { s.CacheReuse, err = cacheReuse(v); return err }},
	{name: "mode", env: "REIKA_MODE", def: "`code`", doc: "`plan` or `ask` for read-only tools, or a custom mode of `.reika/modes/NAME.md`",
		set: func(s *Settings, v any) (err error) {
			s.Mode, err = stringValue("mode", v)
			if err == nil && s.Mode != "" && !modeName.MatchString(s.Mode) {
				err = fmt.Errorf("mode: want code, plan, ask or a custom mode's name (lowercase letters, digits, - and _), got %q", s.Mode)
			}
			return err
		}},
	{name: "engineRetry", env: "REIKA_ENGINE_RETRY", def: strconv.Itoa(DefaultEngineRetry) + " (seconds)", doc: "how long a turn waits for an engine that went away (restarted, killed) before it fails; 0: not at all",
		set: func(s *Settings, v any) (err error) { s.EngineRetry, err = countValue("engineRetry", v); return err }},
	{name: "mcpAllow", env: "REIKA_MCP_ALLOW", def: "none", doc: "MCP servers or tools to run without asking (`SERVER`, `mcp__SERVER__TOOL`; a list, or commas in the variable)",
		set: func(s *Settings, v any) (err error) { s.MCPAllow, err = listValue("mcpAllow", v); return err }},
}

// SettingNames lists every setting key (docs/design.md §5), in order.
func SettingNames() []string {
	names := make([]string, len(settingsTable))
	for i, k := range settingsTable {
		names[i] = k.name
	}
	return names
}

// EnvName returns the REIKA_* variable of a setting, "" when it has none.
func EnvName(name string) string {
	if k := lookupSetting(name); k != nil {
		return k.env
	}
	return ""
}

// lookupSetting is the table's row for name; nil for an unknown setting.
func lookupSetting(name string) *setting {
	for i := range settingsTable {
		if settingsTable[i].name == name {
			return &settingsTable[i]
		}
	}
	return nil
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
	profile, err := profileName(editor, getenv)
	if err != nil {
		return Settings{}, err
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
	if err := s.applyLayers(prof, "profile "+profile, path, getenv, editor); err != nil {
		return Settings{}, err
	}
	s.Profile = profile
	if err := s.resolveKey(getenv); err != nil {
		return Settings{}, err
	}
	return s, nil
}

// profileName is the active profile: the editor's setting, else
// REIKA_PROFILE, else DefaultProfile.
func profileName(editor map[string]any, getenv func(string) (string, bool)) (string, error) {
	profile := DefaultProfile
	if v, ok := getenv("REIKA_PROFILE"); ok && v != "" {
		profile = v
	}
	if v, ok := editor["profile"]; ok {
		s, ok := v.(string)
		if !ok || s == "" {
			return "", fmt.Errorf("editor setting profile: want a non-empty string, got %v", v)
		}
		profile = s
	}
	return profile, nil
}

// applyLayers sets the profile's values (from the config file at path),
// then the REIKA_* variables, then the editor's, each over the one before.
func (s *Settings) applyLayers(prof map[string]any, profFrom, path string, getenv func(string) (string, bool), editor map[string]any) error {
	for k, v := range prof {
		if err := s.set(k, v, profFrom); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	for _, k := range settingsTable {
		if k.env == "" {
			continue
		}
		if v, ok := getenv(k.env); ok && v != "" {
			if err := s.set(k.name, v, "env"); err != nil {
				return fmt.Errorf("%s: %w", k.env, err)
			}
		}
	}
	for k, v := range editor {
		if err := s.set(k, v, "editor"); err != nil {
			return fmt.Errorf("editor setting %w", err)
		}
	}
	return nil
}

// resolveKey reads the API key: REIKA_API_KEY, or the variable apiKeyEnv
// names, which must then be set, or, winning over both, the file
// apiKeyFile names, which must then hold it.
func (s *Settings) resolveKey(getenv func(string) (string, bool)) error {
	if v, ok := getenv("REIKA_API_KEY"); ok {
		s.APIKey = v
	}
	if s.APIKeyEnv != "" {
		v, ok := getenv(s.APIKeyEnv)
		if !ok {
			return fmt.Errorf("setting apiKeyEnv names %s, which is not set", s.APIKeyEnv)
		}
		s.APIKey = v
	}
	if s.APIKeyFile != "" {
		path := s.APIKeyFile
		if rest, ok := strings.CutPrefix(path, "~/"); ok {
			if home, err := os.UserHomeDir(); err == nil {
				path = filepath.Join(home, rest)
			}
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("setting apiKeyFile: %w", err)
		}
		key := strings.TrimSpace(string(b))
		if key == "" || strings.ContainsAny(key, "\r\n") {
			return fmt.Errorf("setting apiKeyFile: %s must hold the key alone, on one line", s.APIKeyFile)
		}
		s.APIKey = key
	}
	return nil
}

func knownSetting(name string) bool { return lookupSetting(name) != nil }

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

// set assigns one setting from a JSON, TOML or environment value and
// records where it came from.
func (s *Settings) set(name string, v any, from string) error {
	k := lookupSetting(name)
	if k == nil {
		return fmt.Errorf("unknown setting %q", name)
	}
	if err := k.set(s, v); err != nil {
		return err
	}
	s.Sources[name] = from
	return nil
}

// stringValue is a string setting's value.
func stringValue(name string, v any) (string, error) {
	if x, ok := v.(string); ok {
		return x, nil
	}
	return "", fmt.Errorf("%s: want a string, got %v", name, v)
}

// countValue is a whole number of at least 0: a JSON or TOML number, or
// its digits.
func countValue(name string, v any) (int, error) {
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
	if n < 0 {
		return 0, fmt.Errorf("%s: want at least 0, got %d", name, n)
	}
	return n, nil
}

// listValue is a list of names: a JSON or TOML array of strings, or the
// environment's text with the names separated by commas or spaces.
func listValue(name string, v any) ([]string, error) {
	switch x := v.(type) {
	case string:
		return strings.FieldsFunc(x, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }), nil
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%s: want a list of strings, got %v", name, v)
			}
			out = append(out, strings.TrimSpace(s))
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: want a list of strings, got %v", name, v)
}

// boolValue is a boolean setting's value: true or false, or in the
// environment's text 1/true/yes/on and 0/false/no/off (empty is false).
func boolValue(name string, v any) (bool, error) {
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
