package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/enginetest"
)

func runEnv(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	for _, k := range []string{"REIKA_CONTEXT_WINDOW", "REIKA_MIN_GEN_TOKENS", "REIKA_REPO_MAP_BUDGET", "REIKA_PROFILE"} {
		t.Setenv(k, "")
	}
	t.Setenv("REIKA_BASE_URL", "http://127.0.0.1:1/v1") // no engine, unless env says one
	for k, v := range env {
		t.Setenv(k, v)
	}
	var out, errb bytes.Buffer
	code = dispatch(args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestWindowSeedTable(t *testing.T) {
	tests := []struct {
		window, reserve string
		want            map[string]int
	}{
		{"16000", "2048", map[string]int{"shedPoint": 12556, "shedTarget": 8789, "foldKeeps": 4185, "recap": 1395, "repoMapChars": 3200}},
		{"24000", "2048", map[string]int{"shedPoint": 19756, "shedTarget": 13829, "foldKeeps": 6585, "recap": 2195, "repoMapChars": 4800}},
		{"24000", "6144", map[string]int{"shedPoint": 16070, "shedTarget": 11249, "foldKeeps": 5356, "recap": 1785, "repoMapChars": 4800}},
		{"32000", "2048", map[string]int{"shedPoint": 26956, "shedTarget": 18869, "foldKeeps": 8985, "recap": 2995, "repoMapChars": 6400}},
		{"128000", "2048", map[string]int{"shedPoint": 113356, "shedTarget": 79349, "foldKeeps": 37785, "recap": 12595, "repoMapChars": 12000}},
	}
	for _, tt := range tests {
		out, errs, code := runEnv(t, nil, "window", "--window", tt.window, "--reserve", tt.reserve, "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("--json printed %q: %v", out, err)
		}
		for _, k := range []string{"window", "reserve", "usable", "shedPoint", "shedTarget", "foldKeeps", "recap", "repoMapChars"} {
			if _, ok := got[k].(float64); !ok {
				t.Errorf("field %s missing or not a number in %s", k, out)
			}
		}
		for k, v := range tt.want {
			if int(got[k].(float64)) != v {
				t.Errorf("window %s reserve %s: %s = %v, want %d", tt.window, tt.reserve, k, got[k], v)
			}
		}
	}
}

func TestWindowTableAndPicture(t *testing.T) {
	out, _, code := runEnv(t, nil, "window", "--window", "24000", "--reserve", "6144")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"usable            17856", "shed point        16070", "shed target       11249",
		"fold keeps         5356", "recap              1785", "repo map chars     4800", "from --window", "▓", "█", "│"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestWindowFromSetting(t *testing.T) {
	out, _, code := runEnv(t, map[string]string{"REIKA_CONTEXT_WINDOW": "32000"}, "window")
	if code != 0 || !strings.Contains(out, "from REIKA_CONTEXT_WINDOW") || !strings.Contains(out, "shed point        26956") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
	out, _, _ = runEnv(t, map[string]string{"REIKA_CONTEXT_WINDOW": "32000", "REIKA_MIN_GEN_TOKENS": "4000"}, "window", "--json")
	if !strings.Contains(out, `"reserve":4000`) {
		t.Errorf("REIKA_MIN_GEN_TOKENS does not pin the reserve: %s", out)
	}
}

// TestWindowFromTheEngine: with no window configured, window asks the
// engine at REIKA_BASE_URL, as a session would.
func TestWindowFromTheEngine(t *testing.T) {
	srv := enginetest.New(enginetest.Options{Window: 20000})
	defer srv.Close()
	out, errs, code := runEnv(t, map[string]string{"REIKA_BASE_URL": srv.URL()}, "window")
	if code != 0 || !strings.Contains(out, "(20000 tokens, from the engine at "+srv.URL()) {
		t.Errorf("exit %d, output:\n%s%s", code, out, errs)
	}
}

// TestWindowReserveAsVariable: --reserve pins the reserve as
// REIKA_MIN_GEN_TOKENS does, as a session takes it: as given (the seed's
// 24k/6144 row), up to half the window.
func TestWindowReserveAsVariable(t *testing.T) {
	for _, c := range []struct {
		window, reserve string
		want            int
	}{
		{"24000", "6144", 6144},
		{"8000", "3000", 3000},
		{"24000", "30000", 12000},
		{"24000", "0", 2048},
	} {
		flag, _, code1 := runEnv(t, nil, "window", "--window", c.window, "--reserve", c.reserve, "--json")
		env, _, code2 := runEnv(t, map[string]string{"REIKA_MIN_GEN_TOKENS": c.reserve}, "window", "--window", c.window, "--json")
		if code1 != 0 || code2 != 0 || flag != env || !strings.Contains(flag, fmt.Sprintf(`"reserve":%d,`, c.want)) {
			t.Errorf("window %s, reserve %s: --reserve gives %s (exit %d), the variable %s (exit %d); want reserve %d from both",
				c.window, c.reserve, flag, code1, env, code2, c.want)
		}
	}
	out, _, _ := runEnv(t, nil, "window", "--window", "24000", "--reserve", "30000")
	if !strings.Contains(out, "capped at half the window") {
		t.Errorf("a capped pin is not said:\n%s", out)
	}
}

func TestWindowBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"window", "--window", "-5"},
		{"window", "--window", "abc"},
		{"window", "--window", "24000", "--reserve", "1.5k"},
		{"window", "--bogus"},
		{"window"}, // nothing configured
	} {
		out, errs, code := runEnv(t, nil, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
		if out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 || errs == "" {
			t.Errorf("%v: want one line on stderr and nothing on stdout, got stdout %q stderr %q", args, out, errs)
		}
	}
}
