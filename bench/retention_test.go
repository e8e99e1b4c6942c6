package main

import (
	"math"
	"testing"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

func TestRetention(t *testing.T) {
	decl := Fact{Path: "strings/builder.go", Line: 107, Name: "Grow", Lines: []string{"func (b *Builder) Grow(n int) {"}}
	quote := Fact{Path: "strings/builder.go", Line: 20, Lines: []string{"type Builder struct {", "\taddr *Builder", "}"}}
	read := "strings/builder.go lines 1-120 of 120\n 19→// A Builder is used to build a string.\n 20→type Builder struct {\n 21→\taddr *Builder\n" +
		"107→func (b *Builder) Grow(n int) {\n"
	for _, tc := range []struct {
		name string
		msgs []ctxwin.Message
		want float64
	}{
		{"the reads in view", []ctxwin.Message{{Role: ctxwin.RoleTool, Content: read + " 22→}\n"}}, 1},
		{"part of the quote", []ctxwin.Message{{Role: ctxwin.RoleTool, Content: read}}, (1 + 2.0/3) / 2},
		{"nothing", []ctxwin.Message{{Role: ctxwin.RoleUser, Content: "strings/builder.go:1070 and line 107"}}, 0},
		// Another line's number that ends in the same digits is not it.
		{"a longer number", []ctxwin.Message{{Role: ctxwin.RoleTool, Content: "1107→func (b *Builder) Grow(n int) {\n"}}, 0},
		{"a note names the place", []ctxwin.Message{{Role: ctxwin.RoleAssistant, Content: "Builder.Grow (strings/builder.go:107): grows"}}, 0.5},
		{"an outline lists it", []ctxwin.Message{{Role: ctxwin.RoleUser, Content: "[context] shed\n- round 3: `strings/builder.go lines 1-120 of 120`\n  outline:\n  L107-121 func (b *Builder) Grow(n int)"}}, 0.5},
		{"an outline of another line", []ctxwin.Message{{Role: ctxwin.RoleUser, Content: "  L10-12 func (b *Builder) Grow(n int)"}}, 0},
	} {
		if got := retention([]Fact{decl, quote}, tc.msgs); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: retention %.3f, want %.3f", tc.name, got, tc.want)
		}
	}
	if got := retention(nil, nil); got != 1 {
		t.Errorf("no facts: %v", got)
	}
}
