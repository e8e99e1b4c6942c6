package outline

import "testing"

func TestDetect(t *testing.T) {
	for _, c := range []struct {
		path, src, want string
	}{
		{"a.go", "", "go"},
		{"a.py", "", "python"},
		{"stubs.pyi", "", "python"},
		{"a.js", "", "javascript"},
		{"a.mjs", "", "javascript"},
		{"a.jsx", "", "javascript"},
		{"a.ts", "", "typescript"},
		{"a.d.ts", "", "typescript"},
		{"a.tsx", "", "tsx"},
		{"a.rs", "", "rust"},
		{"a.c", "", "c"},
		{"a.h", "", "c"},
		{"a.hpp", "", "cpp"},
		{"a.cc", "", "cpp"},
		{"A.java", "", "java"},
		{"a.rb", "", "ruby"},
		{"Rakefile", "", "ruby"},
		{"A.GO", "", "go"},
		{"bin/tool", "#!/usr/bin/env python3\nprint(1)\n", "python"},
		{"bin/tool", "#!/usr/bin/env -S node --flag\n", "javascript"},
		{"bin/tool", "#!/bin/sh\necho\n", ""},
		{"README", "text", ""},
		{"a.xyz", "", ""},
		{"Makefile", "all:\n", ""},
	} {
		if got := Detect(c.path, []byte(c.src)); got != c.want {
			t.Errorf("Detect(%q) = %q, want %q", c.path, got, c.want)
		}
	}
}
