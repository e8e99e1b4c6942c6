package tools

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// realFiles are up to n Go files of the Go distribution's source tree, in
// a fixed order.
func realFiles(t testing.TB, n int) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skip("go env GOROOT:", err)
	}
	paths, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "src", "net", "http", "*.go"))
	if len(paths) == 0 {
		t.Skip("no Go source tree")
	}
	slices.Sort(paths)
	var files []string
	for _, p := range paths[:min(n, len(paths))] {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, string(b))
	}
	return files
}

// edited is file with lines of other inserted, deleted and replaced in
// up to edits places, as a change to real code looks.
func edited(r *rand.Rand, file, other string, edits int) string {
	lines, donor := splitLines(file), splitLines(other)
	for range 1 + r.IntN(edits) {
		at := r.IntN(len(lines) + 1)
		n := 1 + r.IntN(6)
		switch r.IntN(3) {
		case 0:
			from := r.IntN(len(donor))
			lines = slices.Insert(lines, at, donor[from:min(len(donor), from+n)]...)
		case 1:
			lines = slices.Delete(lines, at, min(len(lines), at+n))
		default:
			from := r.IntN(len(donor))
			lines = slices.Replace(lines, at, min(len(lines), at+n), donor[from:min(len(donor), from+n)]...)
		}
	}
	return strings.Join(lines, "")
}

// changedLines counts the - and + lines of a unified diff.
func changedLines(diff string) int {
	n := 0
	for l := range strings.SplitSeq(diff, "\n") {
		if (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")) && !strings.HasPrefix(l, "+++ ") && !strings.HasPrefix(l, "--- ") {
			n++
		}
	}
	return n
}

// The diffs of edit and write are as small as GNU diff's on real code
// (that is why they are our own: see diff.go), and apply.
func TestDiffAsSmallAsGNU(t *testing.T) {
	if _, err := exec.LookPath("diff"); err != nil {
		if os.Getenv("REIKA_TEST_STRICT") == "1" {
			t.Fatal("diff (GNU diffutils) not installed (required: REIKA_TEST_STRICT=1)")
		}
		t.Skip("diff (GNU diffutils) not installed")
	}
	files := realFiles(t, 40)
	r := rand.New(rand.NewPCG(3, 4))
	dir := t.TempDir()
	same := 0
	for i, a := range files {
		b := edited(r, a, files[(i+1)%len(files)], 40)
		ours, _ := unifiedDiff("a/f", "b/f", diffLines(splitLines(a), splitLines(b)))
		writeFile(t, filepath.Join(dir, "a"), a)
		writeFile(t, filepath.Join(dir, "b"), b)
		out, err := exec.Command("diff", "-u", "--label", "a/f", "--label", "b/f", filepath.Join(dir, "a"), filepath.Join(dir, "b")).Output()
		if code := exitCode(err); code != 1 && !(code == 0 && a == b) {
			t.Fatalf("diff -u: %v", err)
		}
		gnu := string(out)
		if changedLines(ours) > changedLines(gnu) {
			t.Errorf("file %d: our diff changes %d lines, GNU diff's %d\n%s", i, changedLines(ours), changedLines(gnu), ours)
		}
		if got := applyUnified(t, a, ours); got != b {
			t.Errorf("file %d: the diff does not apply", i)
		}
		if ours == gnu {
			same++
		}
	}
	t.Logf("our diff is GNU diff's byte for byte on %d of %d files", same, len(files))
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
