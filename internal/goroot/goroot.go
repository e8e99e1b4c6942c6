// Package goroot finds the Go distribution whose sources tests and
// benchmarks read as real code that no one here wrote.
package goroot

import (
	"os/exec"
	"strings"
	"sync"
)

// Dir is `go env GOROOT`, or "" when the go command is not found.
var Dir = sync.OnceValue(func() string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
})
