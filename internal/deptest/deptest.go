// Package deptest checks the dependency direction of docs/design.md §1: a test in
// each package fails when it imports what it must not.
package deptest

import (
	"os/exec"
	"strings"
	"testing"
)

// Forbid fails t when pkg (an import path or "." for the package under test)
// depends, directly or not, on any import path that has one of the given
// prefixes. Test-only imports are not counted.
func Forbid(t *testing.T, pkg string, prefixes ...string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatalf("go list -deps %s printed nothing", pkg)
	}
	for _, d := range deps {
		for _, p := range prefixes {
			if d == p || strings.HasPrefix(d, p+"/") {
				t.Errorf("%s must not import %s (found %s)", pkg, p, d)
			}
		}
	}
}

// Deps returns the non-standard-library dependencies of pkg.
func Deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// ForbidPackage fails t when pkg depends, directly or not, on one of the
// given packages exactly (their subpackages are not counted: forbidding
// agent leaves agent/llm allowed).
func ForbidPackage(t *testing.T, pkg string, paths ...string) {
	t.Helper()
	for _, d := range Deps(t, pkg) {
		for _, p := range paths {
			if d == p {
				t.Errorf("%s must not import %s", pkg, p)
			}
		}
	}
}

// ForbidDirect fails t when pkg itself imports one of the given packages.
// Test-only imports are not counted.
func ForbidDirect(t *testing.T, pkg string, paths ...string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{join .Imports \"\\n\"}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	for _, imp := range strings.Fields(string(out)) {
		for _, p := range paths {
			if imp == p {
				t.Errorf("%s must not import %s itself", pkg, p)
			}
		}
	}
}
