package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

func TestBash(t *testing.T) {
	root := workspace(t, map[string]string{"hello.txt": "hi\n"})
	tests := []struct {
		name    string
		args    string
		text    string
		summary string
		isErr   bool
	}{
		{name: "output", args: `{"command":"cat hello.txt"}`, text: "hi\n(exit status 0)\n", summary: "bash `cat hello.txt`: exit 0, 1 line"},
		{name: "cwd is the root", args: `{"command":"pwd"}`, text: root + "\n(exit status 0)\n"},
		{name: "exit status", args: `{"command":"echo out; echo err >&2; exit 3"}`, text: "out\nerr\n(exit status 3)\n", summary: "bash `echo out; echo err >&2; exit 3`: exit 3, 2 lines"},
		{name: "no output", args: `{"command":"true"}`, text: "(no output)\n(exit status 0)\n", summary: "bash `true`: exit 0, 0 lines"},
		{name: "no final newline", args: `{"command":"printf abc"}`, text: "abc\n(exit status 0)\n"},
		{name: "stdin is empty", args: `{"command":"cat; echo done"}`, text: "done\n(exit status 0)\n"},
		{name: "bash features", args: `{"command":"a=(x y); echo ${#a[@]}"}`, text: "2\n(exit status 0)\n"},
		{name: "multi-line", args: `{"command":"echo one\necho two"}`, text: "one\ntwo\n(exit status 0)\n", summary: "bash `echo one …`: exit 0, 2 lines"},
		{name: "killed by a signal", args: `{"command":"kill -TERM $$"}`, text: "(no output)\n(killed by signal 15 (terminated))\n"},
		{name: "timeout capped", args: `{"command":"echo x","timeout_s":9999}`, text: "x\n(timeout_s 9999 lowered to the maximum, 600)\n(exit status 0)\n"},
		{name: "timeout string", args: `{"command":"echo x","timeout_s":"5"}`, text: "x\n(exit status 0)\n"},
		{name: "zero timeout", args: `{"command":"echo x","timeout_s":0}`, isErr: true, text: "Error: timeout_s must be a positive number of seconds, not 0"},
		{name: "empty command", args: `{"command":"  "}`, isErr: true, text: "Error: command is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ap := &approver{}
			res := run(t, newEnv(t, root, ap), "bash", tt.args)
			if res.IsError != tt.isErr || res.Text != tt.text || res.Kind != ctxwin.KindBash {
				t.Errorf("got %+v\nwant text %q", res, tt.text)
			}
			if tt.summary != "" && res.Summary != tt.summary {
				t.Errorf("summary %q, want %q", res.Summary, tt.summary)
			}
			if !tt.isErr {
				var args struct{ Command string }
				json.Unmarshal([]byte(tt.args), &args)
				if len(ap.asked) != 1 || ap.asked[0].Kind != "command" || ap.asked[0].Detail != args.Command || !strings.HasPrefix(ap.asked[0].Summary, "run `") {
					t.Errorf("approval %+v", ap.asked)
				}
			}
		})
	}
}

func TestBashEnvironment(t *testing.T) {
	t.Setenv("REIKA_API_KEY", "sk-secret")
	t.Setenv("REIKA_TEST_VISIBLE", "yes")
	root := workspace(t, nil)
	res := run(t, newEnv(t, root, &approver{}), "bash", `{"command":"echo ${REIKA_API_KEY:-unset} $REIKA_TEST_VISIBLE $GIT_PAGER"}`)
	if res.Text != "unset yes cat\n(exit status 0)\n" {
		t.Errorf("%q", res.Text)
	}
}

func TestBashDenied(t *testing.T) {
	root := workspace(t, nil)
	res := run(t, newEnv(t, root, &approver{decide: deny}), "bash", `{"command":"touch made"}`)
	if !res.IsError || res.Text != "Error: running `touch made` was denied by the user" {
		t.Errorf("%+v", res)
	}
	if _, err := os.Stat(filepath.Join(root, "made")); err == nil {
		t.Error("the denied command ran")
	}
	env := newEnv(t, root, nil)
	env.Approve = nil
	if res := run(t, env, "bash", `{"command":"touch made"}`); !res.IsError {
		t.Errorf("no approver: %+v", res)
	}
}

// alive reports whether pid is a running process (a zombie is dead).
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil && runtime.GOOS != "linux"
	}
	// pid (comm) STATE ...; comm may hold spaces, so look after the last ')'.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}

func pidFrom(t *testing.T, path string) int {
	t.Helper()
	for range 100 {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

// waitDead waits until pid is gone: a kill is asynchronous in the kernel.
// The deadline is a hang guard, not a timing assertion.
func waitDead(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("%s: process %d is still running", what, pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A timeout kills the command and what it started, and says so.
func TestBashTimeout(t *testing.T) {
	root := workspace(t, nil)
	pidFile := filepath.Join(root, "pid")
	args := jsonArgs(t, map[string]any{"command": "echo started; sleep 300 & echo $! > " + pidFile + "; wait", "timeout_s": 1})
	res := run(t, newEnv(t, root, &approver{}), "bash", args)
	if !res.IsError || res.Text != "started\n(timed out after 1s: killed 2 processes: bash, sleep)\n" {
		t.Errorf("%+v", res)
	}
	if !strings.HasSuffix(res.Summary, ": timed out after 1s, 1 line") {
		t.Errorf("summary %q", res.Summary)
	}
	waitDead(t, pidFrom(t, pidFile), "the background sleep after a timeout")
}

// Cancelling the context kills the command's process group.
func TestBashCancel(t *testing.T) {
	root := workspace(t, nil)
	pidFile := filepath.Join(root, "pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan ctxwin.Result, 1)
	go func() {
		args := jsonArgs(t, map[string]any{"command": "sleep 300 & echo $! > " + pidFile + "; wait"})
		res, _ := Call(ctx, newEnv(t, root, &approver{}), All(), "bash", json.RawMessage(args))
		done <- res
	}()
	pid := pidFrom(t, pidFile)
	cancel()
	var res ctxwin.Result
	select {
	case res = <-done:
	case <-time.After(30 * time.Second): // hang guard
		t.Fatal("bash did not return after cancel")
	}
	if !res.IsError || !regexp.MustCompile(`\(cancelled: killed 2 processes: (bash, sleep|bash ×2)\)`).MatchString(res.Text) || !strings.HasSuffix(res.Summary, ": cancelled, 0 lines") {
		t.Errorf("%+v", res)
	}
	waitDead(t, pid, "the sleep after cancel")
}

// Background processes do not outlive the command, and do not keep the
// tool waiting for them.
func TestBashBackgroundKilled(t *testing.T) {
	root := workspace(t, nil)
	pidFile := filepath.Join(root, "pid")
	args := jsonArgs(t, map[string]any{"command": "sleep 300 & echo $! > " + pidFile + "; echo left"})
	res := run(t, newEnv(t, root, &approver{}), "bash", args)
	// The background process may be killed before it execs sleep.
	if res.IsError || !regexp.MustCompile(`^left\n\(exit status 0\)\n\(killed 1 process the command left running: (sleep|bash); run a server that must keep running with background: true\)\n$`).MatchString(res.Text) {
		t.Errorf("%+v", res)
	}
	waitDead(t, pidFrom(t, pidFile), "a background process after the command ended")
}

// A long output is saved whole; the text keeps its head and tail and names
// the file, with the omitted line range.
func TestBashLongOutput(t *testing.T) {
	root := workspace(t, nil)
	env := newEnv(t, root, &approver{})
	res := run(t, env, "bash", `{"command":"seq 1 200000"}`)
	if res.IsError || res.Summary != "bash `seq 1 200000`: exit 0, 200000 lines" {
		t.Fatalf("%+v", res.Summary)
	}
	var want bytes.Buffer
	for i := 1; i <= 200000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	if res.SavedTo == "" || filepath.Dir(res.SavedTo) != env.TempDir || readFile(t, res.SavedTo) != want.String() {
		t.Fatalf("SavedTo %q does not hold the whole output", res.SavedTo)
	}
	if len(res.Text) > TextHead+TextTail+1000 {
		t.Errorf("text is %d bytes", len(res.Text))
	}
	m := regexpFind(t, `\n\[… [0-9.]+ [KM]B omitted: lines (\d+)-(\d+) of 200000\. The whole output \(1\.3 MB, 200000 lines\) is saved in (\S+): page through it with read`, res.Text)
	first, _ := strconv.Atoi(m[1])
	last, _ := strconv.Atoi(m[2])
	if m[3] != res.SavedTo {
		t.Errorf("marker names %q, not %q", m[3], res.SavedTo)
	}
	before, after, _ := strings.Cut(res.Text, "[…")
	if !strings.HasSuffix(before, fmt.Sprintf("\n%d\n", first-1)) || !strings.HasPrefix(after[strings.Index(after, "\n")+1:], fmt.Sprintf("%d\n", last+1)) {
		t.Errorf("the marker's line range %d-%d does not match the text around it", first, last)
	}
	if !strings.HasSuffix(res.Text, "199999\n200000\n(exit status 0)\n") {
		t.Errorf("text ends %q", res.Text[len(res.Text)-40:])
	}
	// The model pages through the file with read.
	page := run(t, env, "read", jsonArgs(t, map[string]any{"path": res.SavedTo, "start_line": first, "end_line": first + 1}))
	if page.IsError || !strings.Contains(page.Text, fmt.Sprintf("%d→%d\n", first, first)) {
		t.Errorf("read of the saved output: %+v", page)
	}
}

// A medium output (above the save threshold, below the text cap) is whole
// in the text and also saved.
func TestBashMediumOutputSaved(t *testing.T) {
	root := workspace(t, nil)
	res := run(t, newEnv(t, root, &approver{}), "bash", `{"command":"seq 1 1000"}`)
	if res.SavedTo == "" || strings.Contains(res.Text, "[…") || !strings.HasPrefix(res.Text, "1\n2\n") {
		t.Fatalf("%+v", res.SavedTo)
	}
	if got := readFile(t, res.SavedTo); strings.Count(got, "\n") != 1000 {
		t.Errorf("saved %d lines", strings.Count(got, "\n"))
	}
	short := run(t, newEnv(t, root, &approver{}), "bash", `{"command":"seq 1 10"}`)
	if short.SavedTo != "" {
		t.Errorf("a short output was saved to %s", short.SavedTo)
	}
}

// The 500 MB test of the brief: a command printing 500 MB leaves this
// process's memory bounded and the whole output in the temp file.
func TestBashHugeOutputBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 500 MB")
	}
	const line = "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456\n" // 80 bytes
	const total = 500_000_000
	root := workspace(t, nil)
	env := newEnv(t, root, &approver{})
	peak := watchMemory(t)
	command := fmt.Sprintf("yes %s | head -c %d", strings.TrimSuffix(line, "\n"), total)
	res := run(t, env, "bash", jsonArgs(t, map[string]any{"command": command}))
	heap, rss := peak()
	t.Logf("peak heap growth %s, peak RSS growth %s", sizeString(int64(heap)), sizeString(int64(rss)))
	if heap > 64<<20 {
		t.Errorf("the Go heap grew by %s while the command ran", sizeString(int64(heap)))
	}
	if rss > 128<<20 {
		t.Errorf("RSS grew by %s while the command ran", sizeString(int64(rss)))
	}
	if res.IsError || res.Summary != "bash `"+command[:80]+"…`: exit 0, 6250000 lines" {
		t.Errorf("summary %q", res.Summary)
	}
	if len(res.Text) > TextHead+TextTail+1000 {
		t.Errorf("text is %d bytes", len(res.Text))
	}
	wantContains(t, "marker", res.Text, "of 6250000. The whole output (500 MB, 6250000 lines) is saved in "+res.SavedTo)
	f, err := os.Open(res.SavedTo)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, lines, bad := int64(0), 0, 0
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		l, err := r.ReadString('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n += int64(len(l))
		lines++
		if l != line {
			bad++
		}
	}
	if n != total || lines != total/len(line) || bad != 0 {
		t.Errorf("saved %d bytes, %d lines, %d wrong", n, lines, bad)
	}

	// Paging through it with read keeps memory bounded too.
	peak = watchMemory(t)
	page := run(t, env, "read", jsonArgs(t, map[string]any{"path": res.SavedTo, "start_line": 6000000, "end_line": 6000001}))
	heap, _ = peak()
	if page.IsError || page.Text != fmt.Sprintf("%s lines 6000000-6000001 of 6250000\n6000000→%s6000001→%s(249999 more lines; continue with start_line 6000002)\n", res.SavedTo, line, line) {
		t.Errorf("read: %q", page.Text)
	}
	if heap > 64<<20 {
		t.Errorf("reading the saved output grew the heap by %s", sizeString(int64(heap)))
	}
}

// watchMemory samples the Go heap and the RSS until the returned function
// is called, which reports their peak growth over the start.
func watchMemory(t *testing.T) func() (heap, rss uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	baseHeap, baseRSS := ms.HeapAlloc, rssBytes()
	var mu sync.Mutex
	peakHeap, peakRSS := baseHeap, baseRSS
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			r := rssBytes()
			mu.Lock()
			peakHeap, peakRSS = max(peakHeap, ms.HeapAlloc), max(peakRSS, r)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() (uint64, uint64) {
		close(stop)
		<-done
		return peakHeap - baseHeap, peakRSS - baseRSS
	}
}

// rssBytes is this process's resident set size (0 where /proc is missing).
func rssBytes() uint64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}

func BenchmarkBashLargeOutput(b *testing.B) {
	root := workspace(b, nil)
	env := newEnv(b, root, &approver{})
	args := `{"command":"yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 100000000"}`
	b.SetBytes(100_000_000)
	var peakHeap uint64
	for b.Loop() {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapAlloc
		res := run(b, env, "bash", args)
		runtime.ReadMemStats(&ms)
		peakHeap = max(peakHeap, ms.HeapAlloc-min(base, ms.HeapAlloc))
		os.Remove(res.SavedTo)
	}
	b.ReportMetric(float64(peakHeap)/(1<<20), "MiB-heap-after")
}
