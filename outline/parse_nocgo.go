//go:build !cgo

package outline

import "time"

// hasTreeSitter: this build has no parser.
const hasTreeSitter = false

// Without cgo there is no tree-sitter: every language reports ErrNoOutline,
// and the repo map lists files without their declarations.
func parse(lang string, src []byte, timeout time.Duration) (*Outline, error) {
	return nil, ErrNoOutline
}
