//go:build cgo

package outline

import (
	"github.com/reika-lsp/reika-lsp/internal/goroot"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// The benchmarks of the issue:
//
//	go test ./outline -run '^$' -bench . -benchtime 5x
//
// BenchmarkOutlineServerGo   parse + render net/http/server.go
// BenchmarkRepoMapCold       the repo map of $GOROOT/src from nothing
// BenchmarkRepoMapWarm       the same map again, nothing changed, same process
// BenchmarkRepoMapWarmDisk   the same map by a new map (a new process) from the cache directory
// BenchmarkRepoMapRerank     a new touch each time: outlines from memory, ranked again
// BenchmarkCtagsGOROOT       `ctags -R` over the same tree, for comparison

func goSrc(b *testing.B) string {
	root := filepath.Join(goroot.Dir(), "src")
	if _, err := os.Stat(filepath.Join(root, "net", "http", "server.go")); err != nil {
		b.Skipf("no Go source tree: %v", err)
	}
	return root
}

func BenchmarkOutlineServerGo(b *testing.B) {
	path := filepath.Join(goSrc(b), "net", "http", "server.go")
	src, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for range b.N {
		if Summary(path, src, DefaultSummaryBudget) == "" {
			b.Fatal("no outline")
		}
	}
}

func BenchmarkRepoMapCold(b *testing.B) {
	root := goSrc(b)
	for range b.N {
		m := NewRepoMap(root)
		if _, err := m.Render(MapBudget(32000)); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(m.Stats().Files), "files")
	}
}

func BenchmarkRepoMapWarm(b *testing.B) {
	root := goSrc(b)
	m := NewRepoMap(root)
	if _, err := m.Render(MapBudget(32000)); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := m.Render(MapBudget(32000)); err != nil {
			b.Fatal(err)
		}
		if m.Stats().Parsed != 0 {
			b.Fatalf("warm render parsed %d files", m.Stats().Parsed)
		}
	}
	b.ReportMetric(float64(m.Stats().Files), "files")
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "heap-MB") // the cache, kept alive by m
	runtime.KeepAlive(m)
}

// BenchmarkRepoMapWarmDisk is a session start or `reika-lsp repomap` of an
// unchanged tree: a new map whose cache directory holds the last map.
func BenchmarkRepoMapWarmDisk(b *testing.B) {
	root, dir := goSrc(b), b.TempDir()
	m := NewRepoMap(root)
	m.SetCacheDir(dir)
	cold, err := m.Render(MapBudget(32000))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		m := NewRepoMap(root)
		m.SetCacheDir(dir)
		out, err := m.Render(MapBudget(32000))
		if err != nil {
			b.Fatal(err)
		}
		if s := m.Stats(); !s.Reused || out != cold {
			b.Fatalf("the map was not reused (%+v) or differs", s)
		}
	}
}

// BenchmarkRepoMapRerank touches another file before each render: nothing
// is parsed, everything is ranked again.
func BenchmarkRepoMapRerank(b *testing.B) {
	root := goSrc(b)
	m := NewRepoMap(root)
	if _, err := m.Render(MapBudget(32000)); err != nil {
		b.Fatal(err)
	}
	files := []string{"net/http/server.go", "fmt/print.go", "os/file.go", "strings/builder.go"}
	b.ResetTimer()
	for i := range b.N {
		m.Touch(files[i%len(files)])
		if _, err := m.Render(MapBudget(32000)); err != nil {
			b.Fatal(err)
		}
		if s := m.Stats(); s.Reused || s.Parsed != 0 {
			b.Fatalf("rerank: %+v", s)
		}
	}
}

// BenchmarkCtagsGOROOT runs universal-ctags over the tree the repo map
// reads (testdata and vendor excluded, as the map skips them).
func BenchmarkCtagsGOROOT(b *testing.B) {
	ctags, err := exec.LookPath("ctags")
	if err != nil {
		b.Skip("universal-ctags is not installed")
	}
	root := goSrc(b)
	for range b.N {
		cmd := exec.Command(ctags, "-R", "--exclude=testdata", "--exclude=vendor", "--exclude=.*", "-f", os.DevNull, root)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("ctags: %v\n%s", err, out)
		}
	}
}
