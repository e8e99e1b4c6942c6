package tools

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// killTree kills every process that carries marker (markerVar=marker) in
// its environment, and, when root is not 0, every descendant of the live
// process root. A command's processes inherit the marker wherever they go
// (a new session with setsid, a daemon's double fork), so they are found
// after the command's own process group is gone; only a process that
// clears its environment and leaves root's tree escapes. It scans /proc
// until it finds none left, a bounded number of times.
func killTree(root int, marker string) {
	want := []byte(markerVar + "=" + marker + "\x00")
	self := os.Getpid()
	for range 20 {
		victims := findTree(root, want, self)
		if len(victims) == 0 {
			return
		}
		for _, pid := range victims {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// findTree lists the live processes killTree is after.
func findTree(root int, want []byte, self int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	var out []int
	seen := map[int]bool{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		ppid, state, ok := procStat(pid)
		if !ok || state == 'Z' || state == 'X' {
			continue
		}
		if root != 0 {
			children[ppid] = append(children[ppid], pid)
		}
		if env, err := os.ReadFile("/proc/" + e.Name() + "/environ"); err == nil && bytes.Contains(env, want) {
			out = append(out, pid)
			seen[pid] = true
		}
	}
	if root != 0 {
		queue := []int{root}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
			queue = append(queue, children[p]...)
		}
	}
	return out
}

// procStat reads a process's parent and state from /proc/PID/stat.
func procStat(pid int) (ppid int, state byte, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 || len(f[0]) != 1 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(f[1])
	return ppid, f[0][0], err == nil
}
