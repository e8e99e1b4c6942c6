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

func TestVerbatim(t *testing.T) {
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
		{"a longer number", []ctxwin.Message{{Role: ctxwin.RoleTool, Content: "1107→func (b *Builder) Grow(n int) {\n"}}, 0},
		// A note that names the place without the line's text is not it.
		{"a note names the place", []ctxwin.Message{{Role: ctxwin.RoleAssistant, Content: "Builder.Grow (strings/builder.go:107): grows"}}, 0},
		{"a note holds the line", []ctxwin.Message{{Role: ctxwin.RoleAssistant, Content: "- strings/builder.go:107 `func (b *Builder) Grow(n int)` grows"}}, 0.5},
		{"the text on another line than the place", []ctxwin.Message{{Role: ctxwin.RoleAssistant, Content: "strings/builder.go:107\nfunc (b *Builder) Grow(n int)"}}, 0},
		{"a grep result", []ctxwin.Message{{Role: ctxwin.RoleTool, Content: "strings/builder.go:107:func (b *Builder) Grow(n int) {\nstrings/builder.go:21:\taddr *Builder\n"}}, 0.5 + 0.5/3},
		{"an outline line that is the cited line", []ctxwin.Message{{Role: ctxwin.RoleUser, Content: "outline:\n  L107-121 func (b *Builder) Grow(n int)\n"}}, 0.5},
		{"an outline entry that only names it", []ctxwin.Message{{Role: ctxwin.RoleUser, Content: "outline:\n  L107-121 func Grow\n"}}, 0},
		{"an outline of another line", []ctxwin.Message{{Role: ctxwin.RoleUser, Content: "  L10-12 func (b *Builder) Grow(n int)"}}, 0},
		// An outline does not stand for the lines of a quote.
		{"an outline of the quote's first line", []ctxwin.Message{{Role: ctxwin.RoleUser, Content: "  L20-23 type Builder struct"}}, 0},
	} {
		text := requestText(tc.msgs)
		if got := share([]Fact{decl, quote}, text, verbatimInView); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: verbatim %.3f, want %.3f", tc.name, got, tc.want)
		}
	}
}

func TestMeanCI(t *testing.T) {
	// Five sessions of 1, 2, 3, 4, 5: mean 3, s = √2.5, t(0.975, 4) = 2.776.
	m, ci := meanCI([]float64{1, 2, 3, 4, 5})
	half := 2.776 * math.Sqrt(2.5/5)
	if m != 3 || math.Abs(ci[0]-(3-half)) > 1e-9 || math.Abs(ci[1]-(3+half)) > 1e-9 {
		t.Errorf("meanCI = %v %v, want 3 ± %.4f", m, ci, half)
	}
	if _, ci := meanCI([]float64{0.5}); ci != [2]float64{0.5, 0.5} {
		t.Errorf("one session: %v", ci)
	}
	if q := tQuantile975(60); math.Abs(q-2.000) > 0.005 {
		t.Errorf("t(0.975, 60) = %.4f, want 2.000", q)
	}
}
