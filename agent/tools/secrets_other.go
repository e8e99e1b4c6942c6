//go:build !linux

package tools

// hideFromChildren does nothing where the environment block cannot be
// reached: commands do not inherit the secrets, but a command that can
// read this process's environment or memory may find them.
func hideFromChildren(func(string) bool, bool) error { return nil }
