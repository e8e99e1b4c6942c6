package lsp

import "unicode/utf8"

// This file is the one place where byte offsets (what Go strings, the tools
// and tree-sitter use) become LSP positions (a 0-based line and a character
// counted in UTF-16 code units, the only encoding every client supports) and
// back. Line breaks are "\n", "\r\n" and "\r", as LSP 3.17 defines them. An
// invalid UTF-8 byte counts as one code unit, as the U+FFFD an editor shows
// in its place does.

// offsetAt returns the byte offset in text of the position (line, char).
// Positions outside the text are clamped the way clients expect: a character
// past the end of its line means the end of the line (before its line
// break), a line past the last line means the end of the text, and a
// character in the middle of a surrogate pair (inside an astral character)
// rounds down to the start of that character.
func offsetAt(text string, line, char int) int {
	i := 0
	for ; line > 0; line-- {
		next := nextLine(text, i)
		if next < 0 {
			return len(text)
		}
		i = next
	}
	for units := 0; i < len(text) && units < char; {
		c := text[i]
		if c == '\n' || c == '\r' {
			break
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		n := utf16Len(r)
		if units+n > char {
			break
		}
		units += n
		i += size
	}
	return i
}

// positionAt returns the position of byte offset off in text. off is clamped
// to the text; an offset inside a UTF-8 sequence rounds down to the start of
// its character, and one between "\r" and "\n" to the "\r".
func positionAt(text string, off int) (line, char int) {
	off = max(0, min(off, len(text)))
	start := 0
	for i := 0; i < off; {
		c := text[i]
		if c != '\n' && c != '\r' {
			i++
			continue
		}
		next := i + 1
		if c == '\r' && next < len(text) && text[next] == '\n' {
			next++
		}
		if next > off {
			off = i
			break
		}
		line++
		start, i = next, next
	}
	for i := start; i < off; {
		r, size := utf8.DecodeRuneInString(text[i:])
		if i+size > off {
			break
		}
		char += utf16Len(r)
		i += size
	}
	return line, char
}

// nextLine returns the offset just past the line break that ends the line
// containing offset i, or -1 when that line is the last.
func nextLine(text string, i int) int {
	for ; i < len(text); i++ {
		switch text[i] {
		case '\n':
			return i + 1
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				return i + 2
			}
			return i + 1
		}
	}
	return -1
}

// utf16Len is the number of UTF-16 code units of r: 2 for astral
// characters, 1 for everything else (utf8.RuneError included).
func utf16Len(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// lineCount returns the number of lines of text (a text ending in a line
// break has an empty last line).
func lineCount(text string) int {
	n := 1
	for i := 0; ; n++ {
		i = nextLine(text, i)
		if i < 0 {
			return n
		}
	}
}
