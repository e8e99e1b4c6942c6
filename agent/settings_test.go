package agent

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestCacheReuseSetting: cacheReuse from each layer — auto, off or a chunk
// size — and the values refused with the setting named.
func TestCacheReuseSetting(t *testing.T) {
	for _, tc := range []struct {
		env, editor string
		want        int
		err         string
	}{
		{want: CacheReuseAuto},
		{env: "auto", want: CacheReuseAuto},
		{env: "off", want: CacheReuseOff},
		{env: "OFF", want: CacheReuseOff},
		{env: "64", want: 64},
		{env: "64", editor: `{"cacheReuse": 16}`, want: 16},
		{env: "off", editor: `{"cacheReuse": "auto"}`, want: CacheReuseAuto},
		{editor: `{"cacheReuse": "off"}`, want: CacheReuseOff},
		{env: "0", err: "REIKA_CACHE_REUSE: cacheReuse: want auto, off or a chunk size"},
		{env: "sometimes", err: "REIKA_CACHE_REUSE: cacheReuse"},
		{editor: `{"cacheReuse": 2.5}`, err: "editor setting cacheReuse"},
		{editor: `{"cacheReuse": true}`, err: "editor setting cacheReuse"},
	} {
		env := map[string]string{"REIKA_CACHE_REUSE": tc.env}
		s, err := LoadSettings(SettingsSource{
			Editor:     json.RawMessage(tc.editor),
			Getenv:     func(k string) (string, bool) { v, ok := env[k]; return v, ok && v != "" },
			ConfigFile: t.TempDir() + "/none.toml",
		})
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("env %q editor %s: err %v, want %q", tc.env, tc.editor, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("env %q editor %s: %v", tc.env, tc.editor, err)
		case tc.err == "" && s.CacheReuse != tc.want:
			t.Errorf("env %q editor %s: cacheReuse %d, want %d", tc.env, tc.editor, s.CacheReuse, tc.want)
		}
	}
	if EnvName("cacheReuse") != "REIKA_CACHE_REUSE" {
		t.Errorf("env name %q", EnvName("cacheReuse"))
	}
}

// TestCacheReuseFromProfile: the config file's number works too.
func TestCacheReuseFromProfile(t *testing.T) {
	path := t.TempDir() + "/config.toml"
	if err := os.WriteFile(path, []byte("[profiles.default]\ncacheReuse = 32\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadSettings(SettingsSource{Getenv: func(string) (string, bool) { return "", false }, ConfigFile: path})
	if err != nil || s.CacheReuse != 32 || s.Sources["cacheReuse"] != "profile default" {
		t.Errorf("settings %+v, err %v", s, err)
	}
}
