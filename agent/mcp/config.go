// Package mcp connects the agent to MCP servers (the Model Context
// Protocol, through the official Go SDK): it reads their configuration
// (the workspace's .mcp.json, the [mcp.servers.NAME] tables of config.toml),
// remembers whether the user trusts a workspace's servers, starts and
// stops them, lists their tools under names that cannot collide with the
// agent's, and runs their calls with timeouts. The agent decides what of
// them reaches the fixed prefix (the budget) and asks for approvals.
package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// Server sources.
const (
	FromWorkspace = "workspace" // the workspace's .mcp.json
	FromUser      = "user"      // [mcp.servers.NAME] of the user's config.toml
)

// Transports.
const (
	TypeStdio = "stdio"
	TypeHTTP  = "http"
)

// WorkspaceFile is the workspace's server list, at its root.
const WorkspaceFile = ".mcp.json"

// Server is one configured MCP server.
type Server struct {
	Name string
	Type string // TypeStdio or TypeHTTP
	// Command, Args and Env start a stdio server (Env adds to reika's
	// environment, without its secrets).
	Command string
	Args    []string
	Env     map[string]string
	// URL and Headers reach a streamable HTTP server.
	URL     string
	Headers map[string]string
	// From is FromWorkspace or FromUser; File the file it came from.
	From string
	File string
}

// Describe is the server's command line or URL, for the user.
func (s Server) Describe() string {
	if s.Type == TypeHTTP {
		return s.URL
	}
	return strings.TrimSpace(s.Command + " " + strings.Join(s.Args, " "))
}

// entry is one server as .mcp.json and config.toml write it (the shape
// Claude Code and Cursor read; Codex's config.toml uses the same keys).
type entry struct {
	Type    string            `json:"type" toml:"type"`
	Command string            `json:"command" toml:"command"`
	Args    []string          `json:"args" toml:"args"`
	Env     map[string]string `json:"env" toml:"env"`
	URL     string            `json:"url" toml:"url"`
	Headers map[string]string `json:"headers" toml:"headers"`
}

// LoadWorkspace reads root's .mcp.json. It returns no servers and no error
// when there is no file; hash identifies the file's bytes (the trust a user
// gives is for these bytes).
func LoadWorkspace(root string, getenv func(string) (string, bool)) (servers []Server, hash string, err error) {
	path := filepath.Join(root, WorkspaceFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(data)
	hash = hex.EncodeToString(sum[:])
	var doc struct {
		Servers map[string]entry `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, hash, fmt.Errorf("%s: %w", path, err)
	}
	servers, err = fromEntries(doc.Servers, FromWorkspace, path, getenv)
	return servers, hash, err
}

// LoadUser reads the [mcp.servers.NAME] tables of the config file at path.
// A missing file is no servers.
func LoadUser(path string, getenv func(string) (string, bool)) ([]Server, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var doc struct {
		MCP struct {
			Servers map[string]entry `toml:"servers"`
		} `toml:"mcp"`
	}
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return fromEntries(doc.MCP.Servers, FromUser, path, getenv)
}

// fromEntries checks and expands the entries of one file, in name order.
func fromEntries(entries map[string]entry, from, path string, getenv func(string) (string, bool)) ([]Server, error) {
	if getenv == nil {
		getenv = os.LookupEnv
	}
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []Server
	var errs []error
	for _, n := range names {
		s, err := fromEntry(n, entries[n], getenv)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: server %q: %w", path, n, err))
			continue
		}
		s.From, s.File = from, path
		out = append(out, s)
	}
	return out, errors.Join(errs...)
}

func fromEntry(name string, e entry, getenv func(string) (string, bool)) (Server, error) {
	s := Server{Name: name, Type: strings.ToLower(e.Type)}
	if strings.TrimSpace(name) == "" {
		return s, errors.New("an empty name")
	}
	if s.Type == "" {
		s.Type = TypeStdio
		if e.Command == "" && e.URL != "" {
			s.Type = TypeHTTP
		}
	}
	if s.Type == "streamable-http" || s.Type == "streamablehttp" {
		s.Type = TypeHTTP
	}
	var missing []string
	ex := func(v string) string { return expand(v, getenv, &missing) }
	switch s.Type {
	case TypeStdio:
		if e.Command == "" {
			return s, errors.New(`a stdio server needs "command"`)
		}
		s.Command = ex(e.Command)
		for _, a := range e.Args {
			s.Args = append(s.Args, ex(a))
		}
		s.Env = expandMap(e.Env, ex)
	case TypeHTTP:
		if e.URL == "" {
			return s, errors.New(`an http server needs "url"`)
		}
		s.URL = ex(e.URL)
		s.Headers = expandMap(e.Headers, ex)
	default:
		return s, fmt.Errorf("type %q is not supported (stdio or http)", e.Type)
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return s, fmt.Errorf("it names %s, which is not set and has no default (${VAR:-default})", strings.Join(slices.Compact(missing), ", "))
	}
	return s, nil
}

func expandMap(m map[string]string, ex func(string) string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = ex(v)
	}
	return out
}

var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expand replaces ${VAR} and ${VAR:-default} as Claude Code does in
// .mcp.json; a variable that is not set and has no default is added to
// missing.
func expand(v string, getenv func(string) (string, bool), missing *[]string) string {
	return varRef.ReplaceAllStringFunc(v, func(ref string) string {
		m := varRef.FindStringSubmatch(ref)
		if val, ok := getenv(m[1]); ok && val != "" {
			return val
		}
		if m[2] != "" {
			return m[3]
		}
		*missing = append(*missing, m[1])
		return ""
	})
}
