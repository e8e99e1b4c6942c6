package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Packages are the Go distribution's packages a session works on: copied,
// sources and tests, from $(go env GOROOT)/src into a workspace of their
// own, at their import paths (strings/builder.go).
var Packages = []string{
	"strings", "bytes", "bufio", "sort", "strconv", "unicode/utf8", "path", "path/filepath",
	"container/list", "container/heap", "container/ring", "encoding/csv", "encoding/hex",
	"encoding/base64", "encoding/binary", "text/tabwriter", "io", "errors", "flag", "html",
	"log", "mime", "net/mail", "net/url", "sync", "expvar", "image/color", "crypto/md5",
	"compress/gzip", "archive/tar", "regexp", "regexp/syntax", "go/token", "go/scanner",
	"hash/crc32", "math/bits",
}

// goroot is the Go distribution's root.
func goroot() (string, error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOROOT: %w", err)
	}
	root := strings.TrimSpace(string(out))
	if root == "" {
		return "", fmt.Errorf("go env GOROOT printed nothing")
	}
	return root, nil
}

// source is the pristine copy of the packages a workspace starts from.
type source struct {
	files map[string][]byte // workspace-relative path → content
	pkgs  []string          // the packages found
}

// loadSource reads the packages' .go files from the Go distribution.
func loadSource() (*source, error) {
	root, err := goroot()
	if err != nil {
		return nil, err
	}
	src := &source{files: map[string][]byte{}}
	for _, pkg := range Packages {
		dir := filepath.Join(root, "src", filepath.FromSlash(pkg))
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue // a distribution without this package
		}
		n := 0
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
				continue
			}
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				return nil, err
			}
			src.files[pkg+"/"+e.Name()] = data
			n++
		}
		if n > 0 {
			src.pkgs = append(src.pkgs, pkg)
		}
	}
	if len(src.pkgs) < 10 {
		return nil, fmt.Errorf("found only %d of the packages under %s/src: is the Go distribution complete?", len(src.pkgs), root)
	}
	return src, nil
}

// paths lists the files of pkg (not of its subpackages), sorted.
func (s *source) paths(pkg string, tests bool) []string {
	var out []string
	for p := range s.files {
		if filepath.ToSlash(filepath.Dir(p)) != pkg {
			continue
		}
		if strings.HasSuffix(p, "_test.go") != tests {
			continue
		}
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// materialize writes a fresh workspace under dir and returns its root,
// absolute with symlinks resolved (as the tools want it).
func (s *source) materialize(dir string) (string, error) {
	for p, data := range s.files {
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return "", err
		}
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	return filepath.Abs(root)
}

// removeAll removes a workspace, making read-only leftovers writable first.
func removeAll(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
	os.RemoveAll(dir)
}
