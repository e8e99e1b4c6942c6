package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	// A new file in a new directory.
	p := filepath.Join(dir, "a", "b", "new.txt")
	if err := Write(p, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "one" {
		t.Fatalf("content %q", b)
	}
	// An existing executable keeps its mode.
	x := filepath.Join(dir, "run.sh")
	os.WriteFile(x, []byte("#!/bin/sh\n"), 0o755)
	if err := Write(x, []byte("#!/bin/sh\necho hi\n")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(x); fi.Mode().Perm() != 0o755 {
		t.Errorf("mode %v, want 0755", fi.Mode().Perm())
	}
	// A symlink is followed, not replaced.
	link := filepath.Join(dir, "link.txt")
	os.Symlink(p, link)
	if err := Write(link, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the symlink was replaced by a file")
	}
	if b, _ := os.ReadFile(p); string(b) != "two" {
		t.Errorf("the link's target holds %q", b)
	}
	// A directory is not a file; nothing is left behind.
	if err := Write(filepath.Join(dir, "a"), []byte("x")); err == nil {
		t.Error("writing over a directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if filepath.Ext(e.Name()) != "" && e.Name()[0] == '.' {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}
