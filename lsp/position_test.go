package lsp

import (
	"testing"
	"unicode/utf8"
)

func TestOffsetAt(t *testing.T) {
	// "😀" is U+1F600: 4 bytes in UTF-8, 2 code units (a surrogate pair) in UTF-16.
	// "é" is 2 bytes, 1 unit; "€" 3 bytes, 1 unit.
	const text = "a😀b\r\né€\rx\n\n𝄞z"
	tests := []struct {
		line, char int
		want       int
	}{
		{0, 0, 0},
		{0, 1, 1},  // before 😀
		{0, 2, 1},  // inside the surrogate pair: rounds down
		{0, 3, 5},  // after 😀
		{0, 4, 6},  // end of line 0, before "\r\n"
		{0, 99, 6}, // past the end of the line: clamped to it
		{1, 0, 8},
		{1, 1, 10}, // after é
		{1, 2, 13}, // after €, before the lone "\r"
		{1, 3, 13},
		{2, 0, 14},
		{2, 1, 15},
		{3, 0, 16}, // the empty line
		{3, 5, 16},
		{4, 0, 17},
		{4, 1, 17}, // inside 𝄞 (U+1D11E)
		{4, 2, 21},
		{4, 3, 22}, // end of text
		{5, 0, 22}, // past the last line
		{99, 99, 22},
	}
	for _, tt := range tests {
		if got := offsetAt(text, tt.line, tt.char); got != tt.want {
			t.Errorf("offsetAt(%d:%d) = %d, want %d", tt.line, tt.char, got, tt.want)
		}
	}
}

func TestPositionAt(t *testing.T) {
	const text = "a😀b\r\né€\rx\n\n𝄞z"
	tests := []struct {
		off        int
		line, char int
	}{
		{-5, 0, 0},
		{0, 0, 0},
		{1, 0, 1},
		{2, 0, 1}, // inside 😀's UTF-8 bytes: rounds down
		{4, 0, 1},
		{5, 0, 3},
		{6, 0, 4},
		{7, 0, 4}, // between "\r" and "\n"
		{8, 1, 0},
		{10, 1, 1},
		{13, 1, 2},
		{14, 2, 0},
		{16, 3, 0},
		{17, 4, 0},
		{21, 4, 2},
		{22, 4, 3},
		{99, 4, 3},
	}
	for _, tt := range tests {
		line, char := positionAt(text, tt.off)
		if line != tt.line || char != tt.char {
			t.Errorf("positionAt(%d) = %d:%d, want %d:%d", tt.off, line, char, tt.line, tt.char)
		}
	}
}

func TestLineCount(t *testing.T) {
	for text, want := range map[string]int{"": 1, "a": 1, "a\n": 2, "a\r\nb": 2, "a\rb\nc": 3, "\n\n": 3} {
		if got := lineCount(text); got != want {
			t.Errorf("lineCount(%q) = %d, want %d", text, got, want)
		}
	}
}

// FuzzPositionRoundTrip checks that every character boundary survives the
// trip to an LSP position and back, and that no input makes either
// direction panic or leave the text.
func FuzzPositionRoundTrip(f *testing.F) {
	for _, s := range []string{"", "a😀b\r\né€\rx\n\n𝄞z", "\xff\xfe\r\r\n", "x\r"} {
		f.Add(s, 3, 7)
	}
	f.Fuzz(func(t *testing.T, text string, line, char int) {
		if off := offsetAt(text, line, char); off < 0 || off > len(text) {
			t.Fatalf("offsetAt(%d:%d) = %d outside the text", line, char, off)
		}
		for off := 0; off <= len(text); {
			l, c := positionAt(text, off)
			if back := offsetAt(text, l, c); back != off {
				t.Fatalf("offset %d -> %d:%d -> %d in %q", off, l, c, back, text)
			}
			if off == len(text) {
				break
			}
			_, size := utf8.DecodeRuneInString(text[off:])
			if text[off] == '\r' && off+1 < len(text) && text[off+1] == '\n' {
				size = 2 // no position lies between "\r" and "\n"
			}
			off += size
		}
	})
}

func TestTextEdit(t *testing.T) {
	tests := []struct{ old, new string }{
		{"abc", "abc"},
		{"", "x"},
		{"x", ""},
		{"a😀b", "a😁b"},     // differ in the last byte of a 4-byte character
		{"a\r\nb", "a\nb"}, // the edit must not start between \r and \n
		{"a\r\nb", "a\r\rb"},
		{"é", "è"},
		{"line1\nline2\n", "line1\nline2 changed\n"},
		{"aaaa", "aa"},
		{"\xff\xfe", "\xff\xff"},
	}
	for _, tc := range tests {
		checkTextEdit(t, tc.old, tc.new)
	}
}

// checkTextEdit applies textEdit's edit the way a client would (through
// UTF-16 positions) and checks the result.
func checkTextEdit(t *testing.T, old, new string) {
	t.Helper()
	edit, changed := textEdit(old, new)
	if changed != (old != new) {
		t.Fatalf("textEdit(%q, %q) changed = %v", old, new, changed)
	}
	if !changed {
		return
	}
	r := &lspRange{
		Start: position{Line: int(edit.Range.Start.Line), Character: int(edit.Range.Start.Character)},
		End:   position{Line: int(edit.Range.End.Line), Character: int(edit.Range.End.Character)},
	}
	if got := applyChange(old, contentChange{Range: r, Text: edit.NewText}); got != new {
		t.Fatalf("textEdit(%q, %q) = %+v, which gives %q", old, new, edit, got)
	}
}

func FuzzTextEdit(f *testing.F) {
	f.Add("a😀b\r\nc", "a😁b\nc")
	f.Add("", "x\r")
	f.Fuzz(func(t *testing.T, old, new string) {
		checkTextEdit(t, old, new)
	})
}
