package bug

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestWriteAndPrune(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "reports")
	var last *Report
	for i := 0; i < Keep+3; i++ {
		last = Write(dir, "testing", "boom\nsecond line", debug.Stack())
		if last.Err != nil {
			t.Fatal(last.Err)
		}
	}
	if line := last.Error(); line != "internal error (a bug in reika-lsp) while testing: boom …; report: "+last.Path {
		t.Errorf("line = %q", line)
	}
	b, err := os.ReadFile(last.Path)
	if err != nil {
		t.Fatal(err)
	}
	if text := string(b); !strings.Contains(text, "panic:   boom\nsecond line") || !strings.Contains(text, "bug.TestWriteAndPrune") {
		t.Errorf("report:\n%s", text)
	}
	if fi, err := os.Stat(last.Path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("report mode: %v %v", fi.Mode(), err)
	}
	if names, _ := filepath.Glob(filepath.Join(dir, "bug-*.txt")); len(names) != Keep {
		t.Errorf("%d reports kept, want %d", len(names), Keep)
	}
}

func TestUnwritableReportSaysWhy(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	r := Write(filepath.Join(file, "reports"), "testing", 7, nil)
	if r.Path != "" || r.Err == nil || !strings.Contains(r.Error(), "while testing: 7 (no report: ") {
		t.Errorf("report in a directory that cannot be made = %+v: %q", r, r.Error())
	}
}
