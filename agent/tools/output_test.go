package tools

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// The collector gives the same result however the output is split into
// writes, keeps the whole output in its file, and cuts the text at line and
// rune boundaries.
func TestOutputChunking(t *testing.T) {
	var full bytes.Buffer
	for i := range 40000 {
		fmt.Fprintf(&full, "%d: héllo wörld ☺\n", i)
	}
	data := full.Bytes()
	r := rand.New(rand.NewPCG(3, 4))
	var first string
	for trial := range 5 {
		env := &Env{TempDir: t.TempDir()}
		o := newOutput(env, "test")
		for rest := data; len(rest) > 0; {
			n := min(len(rest), 1+r.IntN(70000))
			if trial == 0 {
				n = len(rest) // one write
			}
			if w, err := o.Write(rest[:n]); w != n || err != nil {
				t.Fatalf("Write = %d, %v", w, err)
			}
			rest = rest[n:]
		}
		text, saved := o.finish()
		if saved == "" || readFile(t, saved) != full.String() {
			t.Fatalf("trial %d: saved file differs", trial)
		}
		if trial == 0 {
			first = text
		} else if text != strings.Replace(first, savedName(first), saved, 1) {
			t.Fatalf("trial %d: text differs from a single write", trial)
		}
		if !utf8.ValidString(text) || len(text) > TextHead+TextTail+500 {
			t.Fatalf("text: %d bytes, valid UTF-8 %v", len(text), utf8.ValidString(text))
		}
		before, after, ok := strings.Cut(text, "[… ")
		if !ok || !strings.HasPrefix(full.String(), before) || !strings.HasSuffix(full.String(), after[strings.IndexByte(after, '\n')+1:]) {
			t.Fatalf("head or tail is not the output's")
		}
		if o.lines() != 40000 {
			t.Errorf("lines = %d", o.lines())
		}
	}
}

func savedName(text string) string {
	i := strings.Index(text, " is saved in ")
	rest := text[i+len(" is saved in "):]
	return rest[:strings.IndexByte(rest, ':')]
}

func TestOutputThresholds(t *testing.T) {
	tests := []struct {
		name  string
		data  string
		saved bool
		cut   bool
	}{
		{"short", "a\nb\n", false, false},
		{"at the byte threshold", strings.Repeat("x", SaveBytes), false, false},
		{"past the byte threshold", strings.Repeat("x", SaveBytes+1), true, false},
		{"at the line threshold", strings.Repeat("\n", SaveLines), false, false},
		{"past the line threshold", strings.Repeat("\n", SaveLines+1), true, false},
		{"at the text cap", strings.Repeat("y", TextHead+TextTail), true, false},
		{"past the text cap", strings.Repeat("y", TextHead+TextTail+1), true, true},
		{"one long line", strings.Repeat("z", 3*TextHead), true, true},
	}
	for _, tt := range tests {
		env := &Env{TempDir: t.TempDir()}
		o := newOutput(env, "t")
		o.WriteString(tt.data)
		text, saved := o.finish()
		if (saved != "") != tt.saved || strings.Contains(text, "[…") != tt.cut {
			t.Errorf("%s: saved %q, cut %v", tt.name, saved, strings.Contains(text, "[…"))
		}
		if !tt.cut && text != tt.data {
			t.Errorf("%s: text is not the whole output", tt.name)
		}
		if tt.cut && !strings.Contains(text, "The whole output") {
			t.Errorf("%s: marker %q", tt.name, firstLine(text[TextHead-100:], 300))
		}
	}
}

func TestOutputNoTempDir(t *testing.T) {
	o := newOutput(&Env{}, "t")
	o.WriteString(strings.Repeat("line\n", 100000))
	text, saved := o.finish()
	if saved != "" || !strings.Contains(text, "could not be saved: no temp directory is configured") {
		t.Errorf("saved %q, text has %q", saved, firstLine(text[strings.Index(text, "[…"):], 300))
	}
}

func TestOutputDiscard(t *testing.T) {
	dir := t.TempDir()
	o := newOutput(&Env{TempDir: dir}, "t")
	o.WriteString(strings.Repeat("x", SaveBytes+1))
	o.discard()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("discard left %v", entries)
	}
}

func TestRing(t *testing.T) {
	r := ring{size: 5}
	var all []byte
	for _, s := range []string{"ab", "cde", "f", "", "ghijklmn", "o"} {
		r.write([]byte(s))
		all = append(all, s...)
		want := all[max(0, len(all)-5):]
		if got := r.bytes(); !bytes.Equal(got, want) {
			t.Errorf("after %q: %q, want %q", s, got, want)
		}
	}
}

func TestSizeString(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1000: "1.0 KB", 12345: "12 KB", 999_999: "999 KB", 5_242_880: "5.2 MB", 500_000_000: "500 MB"} {
		if got := sizeString(n); got != want {
			t.Errorf("sizeString(%d) = %q, want %q", n, got, want)
		}
	}
}

// A saved output is named after its content: the same output saved twice is
// one file under one name, a different one gets another name of the same
// length, and no partial file is left behind.
func TestOutputNamedByContent(t *testing.T) {
	dir := t.TempDir()
	save := func(s string) string {
		o := newOutput(&Env{TempDir: dir}, "glob")
		o.WriteString(s)
		_, saved := o.finish()
		if saved == "" || readFile(t, saved) != s {
			t.Fatalf("saved to %q", saved)
		}
		return saved
	}
	long := strings.Repeat("a/b.go\n", SaveLines+1)
	a, b, c := save(long), save(long), save(long+"c.go\n")
	if a != b || a == c || len(a) != len(c) || !strings.HasPrefix(filepath.Base(a), "glob-") {
		t.Errorf("saved to %s, %s and %s", a, b, c)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("the directory holds %v", entries)
	}
}
