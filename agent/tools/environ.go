package tools

import "os"

// Environ is this process's environment without the secrets
// (HideSecrets): what a process the agent starts for other reasons than a
// command (an MCP server) starts with.
func Environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !isSecret(kv) {
			env = append(env, kv)
		}
	}
	return env
}
