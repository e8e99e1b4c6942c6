package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAPIKeyFile: the key file wins over both variables; a missing or
// malformed file is an error naming the setting.
func TestAPIKeyFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "key")
	os.WriteFile(good, []byte("sk-from-file\n"), 0o600)
	two := filepath.Join(dir, "two")
	os.WriteFile(two, []byte("sk-a\nsk-b\n"), 0o600)
	for _, tc := range []struct {
		env  map[string]string
		want string
		err  string
	}{
		{env: map[string]string{"REIKA_API_KEY_FILE": good}, want: "sk-from-file"},
		{env: map[string]string{"REIKA_API_KEY_FILE": good, "REIKA_API_KEY": "sk-env"}, want: "sk-from-file"},
		{env: map[string]string{"REIKA_API_KEY": "sk-env"}, want: "sk-env"},
		{env: map[string]string{"REIKA_API_KEY_FILE": filepath.Join(dir, "none")}, err: "setting apiKeyFile: open "},
		{env: map[string]string{"REIKA_API_KEY_FILE": two}, err: "must hold the key alone, on one line"},
	} {
		s, err := LoadSettings(SettingsSource{
			Getenv:     func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok },
			ConfigFile: filepath.Join(dir, "none.toml"),
		})
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%v: err %v, want %q", tc.env, err, tc.err)
		case tc.err == "" && (err != nil || s.APIKey != tc.want):
			t.Errorf("%v: key %q, err %v; want %q", tc.env, s.APIKey, err, tc.want)
		}
	}
}
