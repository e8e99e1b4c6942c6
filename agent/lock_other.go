//go:build !unix

package agent

import "os"

// lockFile does nothing where flock is not available: two processes on one
// workspace can then share a session log.
func lockFile(*os.File) error { return nil }
