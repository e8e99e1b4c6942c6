//go:build !cgo

package outline

import (
	"errors"
	"testing"
)

// Without cgo there is no parser: every file has no outline, and Summary
// is empty, but nothing fails.
func TestNoCgo(t *testing.T) {
	if _, err := Parse("a.go", []byte("package a\n\nfunc F() {}\n")); !errors.Is(err, ErrNoOutline) {
		t.Errorf("Parse without cgo: err = %v, want ErrNoOutline", err)
	}
	if s := Summary("a.go", []byte("package a\n"), 1000); s != "" {
		t.Errorf("Summary without cgo = %q", s)
	}
}
