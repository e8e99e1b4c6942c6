package mcp

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func env(kv ...string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == k {
				return kv[i+1], true
			}
		}
		return "", false
	}
}

func TestLoadWorkspace(t *testing.T) {
	root := t.TempDir()
	if s, h, err := LoadWorkspace(root, nil); s != nil || h != "" || err != nil {
		t.Fatalf("no file: %v %q %v", s, h, err)
	}
	doc := `{"mcpServers": {
	  "files": {"command": "npx", "args": ["-y", "srv", "${HOME_DIR:-/home}"], "env": {"KEY": "${API_KEY}"}},
	  "explicit": {"type": "stdio", "command": "srv2"},
	  "web": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${API_KEY}"}}
	}}`
	os.WriteFile(filepath.Join(root, ".mcp.json"), []byte(doc), 0o644)
	servers, hash, err := LoadWorkspace(root, env("API_KEY", "k1"))
	if err != nil || len(hash) != 64 {
		t.Fatal(err, hash)
	}
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"explicit", "files", "web"}) {
		t.Fatalf("names %v", names)
	}
	f, w := servers[1], servers[2]
	if f.Type != TypeStdio || f.Command != "npx" || !slices.Equal(f.Args, []string{"-y", "srv", "/home"}) || f.Env["KEY"] != "k1" || f.From != FromWorkspace {
		t.Errorf("files: %+v", f)
	}
	if w.Type != TypeHTTP || w.URL != "https://example.com/mcp" || w.Headers["Authorization"] != "Bearer k1" {
		t.Errorf("web: %+v", w)
	}
	if servers[0].Type != TypeStdio {
		t.Errorf("explicit: %+v", servers[0])
	}
	// A variable that is not set, and a bad type: errors naming them; the
	// good servers still load.
	_, _, err = LoadWorkspace(root, env())
	if err == nil || !strings.Contains(err.Error(), "API_KEY") {
		t.Errorf("missing variable: %v", err)
	}
	os.WriteFile(filepath.Join(root, ".mcp.json"), []byte(`{"mcpServers": {"a": {"type": "sse", "url": "x"}, "b": {"command": "ok"}}}`), 0o644)
	servers, hash2, err := LoadWorkspace(root, env())
	if err == nil || !strings.Contains(err.Error(), `"sse" is not supported`) || len(servers) != 1 || hash2 == hash {
		t.Errorf("bad type: %v %v", servers, err)
	}
}

func TestLoadUser(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	if s, err := LoadUser(path, nil); s != nil || err != nil {
		t.Fatalf("no file: %v %v", s, err)
	}
	os.WriteFile(path, []byte(`
[profiles.default]
model = "m"

[mcp.servers.git]
command = "mcp-git"
args = ["--repo", "."]
env = { TOKEN = "${T:-none}" }

[mcp.servers.remote]
type = "http"
url = "http://127.0.0.1:9/mcp"
`), 0o644)
	servers, err := LoadUser(path, env())
	if err != nil || len(servers) != 2 {
		t.Fatal(servers, err)
	}
	if g := servers[0]; g.Name != "git" || g.Command != "mcp-git" || g.Env["TOKEN"] != "none" || g.From != FromUser {
		t.Errorf("git: %+v", g)
	}
	if r := servers[1]; r.Type != TypeHTTP || r.URL != "http://127.0.0.1:9/mcp" {
		t.Errorf("remote: %+v", r)
	}
}

func TestNames(t *testing.T) {
	n := newNamer([]string{"read"})
	if got := n.name("my.server", "do thing"); got != "mcp__my_server__do_thing" {
		t.Errorf("sanitized: %q", got)
	}
	// Two tools that sanitize alike: the second gets a hash suffix.
	if got := n.name("my server", "do.thing"); got == "mcp__my_server__do_thing" || !strings.HasPrefix(got, "mcp__my_server__do_thing_") || len(got) > MaxNameLen {
		t.Errorf("collision: %q", got)
	}
	long := n.name("server", strings.Repeat("x", 100))
	if len(long) != MaxNameLen || !strings.HasPrefix(long, "mcp__server__xxx") {
		t.Errorf("long: %q (%d)", long, len(long))
	}
	if again := newNamer(nil).name("server", strings.Repeat("x", 100)); again != long {
		t.Errorf("not deterministic: %q, %q", again, long)
	}
	for _, name := range []string{long, n.name("ü", "ß")} {
		for _, r := range name {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
				t.Errorf("%q holds %q", name, r)
			}
		}
	}
}

func TestTrust(t *testing.T) {
	state := t.TempDir()
	if Trusted(state, "/ws", "h1") {
		t.Fatal("trusted before asked")
	}
	if err := Trust(state, "/ws", "h1"); err != nil {
		t.Fatal(err)
	}
	if !Trusted(state, "/ws", "h1") || Trusted(state, "/ws", "h2") || Trusted(state, "/other", "h1") {
		t.Error("trust is not per workspace and file")
	}
	if Declined(state, "/ws", "h1") {
		t.Error("a trusted workspace is declined")
	}
	if err := Decline(state, "/other", "h1"); err != nil {
		t.Fatal(err)
	}
	if !Declined(state, "/other", "h1") || Trusted(state, "/other", "h1") || Declined(state, "/other", "h2") || !Trusted(state, "/ws", "h1") {
		t.Error("a decline is not per workspace and file, or it changed another workspace's answer")
	}
}
