package tools

import (
	"strings"
	"sync"
)

// Secrets are variables that never reach a tool process: the engine's API
// key under the names the settings give it (REIKA_API_KEY always), and its
// value under any name.
var secrets = struct {
	mu     sync.Mutex
	names  map[string]bool // guarded by mu
	values map[string]bool // guarded by mu
}{names: map[string]bool{"REIKA_API_KEY": true}, values: map[string]bool{}}

// minSecretValue is the shortest value hidden under any name; a shorter
// key is hidden only under the names given.
const minSecretValue = 8

// HideSecrets keeps the variables names, and any variable whose value is
// one of values, out of the environment of every command the tools run
// from now on (what is hidden stays hidden). It also takes them out of
// what a command can read of its parent: on Linux their values are
// overwritten in this process's environment block, which is what
// /proc/$PPID/environ shows (Go keeps its own copy, so os.Getenv still
// sees them), and once a value is known the process is marked
// non-dumpable, so that a command running as the same user can neither
// read its memory (/proc/$PPID/mem) nor attach to it. A command running
// as root can still read the memory of any process.
func HideSecrets(names, values []string) error {
	secrets.mu.Lock()
	for _, n := range names {
		if n != "" {
			secrets.names[n] = true
		}
	}
	for _, v := range values {
		if v != "" {
			secrets.values[v] = true
		}
	}
	known := len(secrets.values) > 0
	secrets.mu.Unlock()
	return hideFromChildren(isSecret, known)
}

// isSecret reports whether the environment entry NAME=VALUE is secret.
func isSecret(kv string) bool {
	name, value, _ := strings.Cut(kv, "=")
	secrets.mu.Lock()
	defer secrets.mu.Unlock()
	if secrets.names[name] {
		return true
	}
	return len(value) >= minSecretValue && secrets.values[value]
}
