// Command recite rewrites, in place, the citations of the design files that
// used to live outside the repository (DESIGN.md, PROTOCOL.md, the research
// notes, the seed) in the repository's source files into citations of
// docs/, and anchors a bare § to docs/design.md (docref.Rewrite). It is
// idempotent; run it from anywhere in the repository after a merge brings
// new citations:
//
//	go run ./internal/docref/cmd/recite
//	go test ./internal/docref
//
// An argument names another root. It prints the files it changed.
package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/reika-lsp/reika-lsp/internal/docref"
)

func main() {
	root, err := rootDir()
	if err != nil {
		fail(err)
	}
	files, err := docref.SourceFiles(root)
	if err != nil {
		fail(err)
	}
	for _, f := range files {
		path := filepath.Join(root, filepath.FromSlash(f))
		src, err := os.ReadFile(path)
		if err != nil {
			fail(err)
		}
		out := docref.Rewrite(src)
		if bytes.Equal(out, src) {
			continue
		}
		info, err := os.Stat(path)
		if err != nil {
			fail(err)
		}
		if err := os.WriteFile(path, out, info.Mode().Perm()); err != nil {
			fail(err)
		}
		fmt.Println(f)
	}
}

// rootDir is the argument, else the top of the git checkout.
func rootDir() (string, error) {
	if len(os.Args) > 1 {
		return os.Args[1], nil
	}
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("git rev-parse --show-toplevel: %v (give the repository root as the argument)", err)
	}
	return strings.TrimSpace(string(out)), nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "recite:", err)
	os.Exit(1)
}
