//go:build cgo

package outline

import (
	"bufio"
	"fmt"
	"github.com/reika-lsp/reika-lsp/internal/goroot"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestMemoryUnderLoad parses thousands of files of the Go distribution
// (and the other languages' golden sources) from 8 goroutines, twice, in a
// child process, and reports the process's peak RSS (VmHWM). Closing every
// tree keeps it bounded: with trees left to finalizers the same work grows
// to gigabytes. The second pass must not raise the peak much, which a leak
// of trees or parsers would.
func TestMemoryUnderLoad(t *testing.T) {
	if os.Getenv("OUTLINE_LOAD_CHILD") == "1" {
		loadChild(t)
		return
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc/self/status to read the peak RSS from")
	}
	n := 3000
	if testing.Short() {
		n = 400
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryUnderLoad$", "-test.v")
	cmd.Env = append(os.Environ(), "OUTLINE_LOAD_CHILD=1", "OUTLINE_LOAD_FILES="+strconv.Itoa(n))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var files, bytesIn, hwm1, hwm2, hwm0 int
	for _, line := range strings.Split(string(out), "\n") {
		if i := strings.Index(line, "LOAD "); i >= 0 {
			fmt.Sscanf(line[i:], "LOAD files=%d bytes=%d hwm1_kb=%d hwm2_kb=%d hwm0_kb=%d", &files, &bytesIn, &hwm1, &hwm2, &hwm0)
		}
	}
	if files == 0 {
		t.Fatalf("child reported nothing:\n%s", out)
	}
	t.Logf("parsed %d files (%.1f MB) twice from 8 goroutines: peak RSS %.1f MB before parsing (the sources in memory), %.1f MB after the first pass, %.1f MB after the second",
		files, float64(bytesIn)/1e6, float64(hwm0)/1024, float64(hwm1)/1024, float64(hwm2)/1024)
	// Trees left to finalizers would take gigabytes (25-36 times each
	// file's size, for 100 MB of sources).
	const bound = 768 << 10 // kB
	if hwm2 > bound {
		t.Errorf("peak RSS %d kB over the bound of %d kB", hwm2, bound)
	}
	// The allocator keeps some freed memory per thread: the peak may rise
	// a little on the second pass, then stays flat.
	if hwm2 > hwm1*3/2+32<<10 {
		t.Errorf("the second pass raised the peak RSS from %d to %d kB: something is not freed", hwm1, hwm2)
	}
}

func loadChild(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("OUTLINE_LOAD_FILES"))
	var srcs []source
	total := 0
	root := filepath.Join(goroot.Dir(), "src")
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(srcs) >= n {
			return filepath.SkipDir
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			data, err := os.ReadFile(p)
			if err == nil {
				srcs = append(srcs, source{p, data})
				total += len(data)
			}
		}
		return nil
	})
	for _, s := range goldenSources(t) {
		srcs = append(srcs, s)
		total += len(s.data)
	}
	pass := func() {
		var wg sync.WaitGroup
		next := make(chan source)
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for s := range next {
					Summary(s.name, s.data, DefaultSummaryBudget)
				}
			}()
		}
		for _, s := range srcs {
			next <- s
		}
		close(next)
		wg.Wait()
		if n := liveTrees.Load(); n != 0 {
			t.Errorf("%d trees left open", n)
		}
	}
	hwm0 := vmHWM(t)
	pass()
	hwm1 := vmHWM(t)
	pass()
	hwm2 := vmHWM(t)
	fmt.Printf("LOAD files=%d bytes=%d hwm1_kb=%d hwm2_kb=%d hwm0_kb=%d\n", len(srcs), total, hwm1, hwm2, hwm0)
}

// vmHWM returns the peak resident set size of this process in kB.
func vmHWM(t *testing.T) int {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return kb
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
	return 0
}
