package tools

import (
	"bytes"
	"cmp"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// How a command's processes are found on Linux.
//
// The server makes itself a child subreaper (PR_SET_CHILD_SUBREAPER) before
// its first command: a process whose parent dies — the middle of a double
// fork, the child of `setsid`, `nohup` or a daemon — is then adopted by the
// server instead of by init, so it never leaves the server's tree.
//
// When a command ends, times out or is cancelled, sweep kills every process
// that is the command's, by this rule, and repeats until none is left:
//
//   - a descendant of the command's shell, while the shell lives;
//   - a member of the command's process group (its pgid is the shell's pid,
//     which the kernel does not reuse while the group has a member);
//   - a process started after the shell whose environment carries the
//     command's marker (markerVar), wherever it went;
//   - an orphan the server adopted — its parent is now the server — that
//     started after the shell, was not the server's child before the
//     command started, is outside the server's own process group and is
//     no other running command's (its shell, group or marker);
//   - and every descendant of those.
//
// The server's own children (ripgrep, language servers, engines it starts)
// stay in its process group, were its children before the command, or
// carry ServerChildVar (MCP servers, in groups of their own), so they are
// never swept; another command's shell is started and tracked under a lock
// no sweep looks without. What the rule cannot tell apart: a process the
// server itself starts in a group of its own without ServerChildVar while
// a command runs, and a process another running command detaches with a
// cleared environment at the same time; the server does neither. A process the command has another daemon
// start for it (`systemd-run`, `docker run`) is not its descendant and is
// not found.
//
// Adopted orphans the sweep kills are reaped by pid (never wait(-1), which
// would take an exit status from os/exec).

// sweepFinds says whether sweep finds and names a command's processes.
const sweepFinds = true

var subreaper struct {
	once sync.Once
	err  error
}

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER of prctl(2).
const prSetChildSubreaper = 36

// becomeSubreaper makes this process a child subreaper, once.
func becomeSubreaper() error {
	subreaper.once.Do(func() {
		if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
			subreaper.err = e
		}
	})
	return subreaper.err
}

// procInfo is what /proc/PID/stat says of a process.
type procInfo struct {
	pid, ppid, pgid int
	state           byte
	start           uint64 // clock ticks after boot
	comm            string
}

// readProc reads /proc/PID/stat.
func readProc(pid int) (procInfo, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	i, j := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if i < 0 || j < i {
		return procInfo{}, false
	}
	f := strings.Fields(string(b[j+1:]))
	// state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
	// cmajflt utime stime cutime cstime priority nice num_threads
	// itrealvalue starttime
	if len(f) < 20 || len(f[0]) != 1 {
		return procInfo{}, false
	}
	p := procInfo{pid: pid, state: f[0][0], comm: string(b[i+1 : j])}
	var e1, e2, e3 error
	p.ppid, e1 = strconv.Atoi(f[1])
	p.pgid, e2 = strconv.Atoi(f[2])
	p.start, e3 = strconv.ParseUint(f[19], 10, 64)
	return p, e1 == nil && e2 == nil && e3 == nil
}

// procTable is a snapshot of the processes this user can see.
type procTable struct {
	procs    map[int]procInfo
	children map[int][]int
}

func snapshot() procTable {
	t := procTable{procs: map[int]procInfo{}, children: map[int][]int{}}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			t.procs[pid] = p
			t.children[p.ppid] = append(t.children[p.ppid], pid)
		}
	}
	return t
}

func hasMarker(pid int, marker string) bool {
	return environHas(pid, markerVar+"="+marker+"\x00")
}

// environHas says whether the environment of pid, as /proc shows it, has
// an entry that begins with entry (which ends with "\x00" to match a whole
// entry).
func environHas(pid int, entry string) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	return err == nil && (bytes.HasPrefix(env, []byte(entry)) || bytes.Contains(env, []byte("\x00"+entry)))
}

// commandProcs identifies one running command's processes.
type commandProcs struct {
	shell  int
	marker string
	start  uint64 // the shell's start time
	killed []string
	seen   map[int]bool // counted in killed
	before map[int]bool // the server's children before the command started
}

// live are the commands running in this process, so that one command's
// sweep leaves the others' processes alone.
var live struct {
	sync.Mutex
	cmds map[*commandProcs]bool
}

// prepareCommand readies the tracking of a command whose processes carry
// marker, before it starts: the server's children now are not the
// command's.
func prepareCommand(marker string) *commandProcs {
	c := &commandProcs{marker: marker, seen: map[int]bool{}, before: map[int]bool{}}
	self := os.Getpid()
	for _, pid := range snapshot().children[self] {
		c.before[pid] = true
	}
	return c
}

// starting is held while a command starts and is tracked, and while a
// sweep looks at the process table: a shell started but not yet tracked is
// the server's child in a group of its own, which another command's sweep
// would take for an adopted orphan, kill, and reap from under os/exec
// ("killed by waitid: no child processes"; seen with commands of two
// sessions at once).
var starting sync.Mutex

// launch starts cmd and tracks it, while no sweep looks.
func (c *commandProcs) launch(cmd *exec.Cmd) error {
	starting.Lock()
	defer starting.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	c.track(cmd)
	return nil
}

// track starts tracking the started command.
func (c *commandProcs) track(cmd *exec.Cmd) {
	c.shell = cmd.Process.Pid
	if p, ok := readProc(c.shell); ok {
		c.start = p.start
	}
	live.Lock()
	if live.cmds == nil {
		live.cmds = map[*commandProcs]bool{}
	}
	live.cmds[c] = true
	live.Unlock()
}

// untrack ends the tracking of c, after its last sweep.
func (c *commandProcs) untrack() {
	live.Lock()
	delete(live.cmds, c)
	live.Unlock()
}

// others says whether p belongs to another running command.
func (c *commandProcs) others(p procInfo) bool {
	live.Lock()
	defer live.Unlock()
	for o := range live.cmds {
		if o != c && (p.pid == o.shell || p.pgid == o.shell || hasMarker(p.pid, o.marker)) {
			return true
		}
	}
	return false
}

// owns says whether p is c's by the rule above (its descendants are added
// by find).
func (c *commandProcs) owns(p procInfo, self, selfGroup int) bool {
	switch {
	case p.start < c.start:
		return false
	case p.pid == c.shell, p.pgid == c.shell:
		return true
	case hasMarker(p.pid, c.marker):
		return true
	}
	return p.ppid == self && p.pgid != selfGroup && !c.before[p.pid] && !c.others(p) && !serverChild(p.pid)
}

// serverChild says whether pid is a process the server started for
// itself in a group of its own (an MCP server): its environment carries
// ServerChildVar.
func serverChild(pid int) bool { return environHas(pid, ServerChildVar+"=") }

// find lists c's processes in t, zombies included.
func (c *commandProcs) find(t procTable) []procInfo {
	self, selfGroup := os.Getpid(), syscall.Getpgrp()
	mine := map[int]bool{}
	var queue []int
	for pid, p := range t.procs {
		if pid != self && c.owns(p, self, selfGroup) {
			mine[pid] = true
			queue = append(queue, pid)
		}
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, ch := range t.children[pid] {
			if !mine[ch] && ch != self {
				mine[ch] = true
				queue = append(queue, ch)
			}
		}
	}
	out := make([]procInfo, 0, len(mine))
	for pid := range mine {
		out = append(out, t.procs[pid])
	}
	slices.SortFunc(out, func(a, b procInfo) int { return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.pid, b.pid)) })
	return out
}

// sweep kills c's processes until none is left, reaping the orphans the
// server adopted (never the shell, which os/exec waits for), and adds the
// names of those it killed to c.killed. It gives up after a bounded
// number of rounds; left is how many were still there.
func (c *commandProcs) sweep() (left int) {
	self := os.Getpid()
	for round := 0; round < 200; round++ {
		starting.Lock()
		procs := c.find(snapshot())
		starting.Unlock()
		running, zombies := 0, 0
		for _, p := range procs {
			if p.state == 'Z' || p.state == 'X' {
				if p.ppid == self && p.pid != c.shell {
					var ws syscall.WaitStatus
					syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil)
				}
				zombies++
				continue
			}
			running++
			if syscall.Kill(p.pid, syscall.SIGKILL) == nil && !c.seen[p.pid] {
				c.seen[p.pid] = true
				c.killed = append(c.killed, p.comm)
			}
		}
		if running == 0 && zombies == 0 {
			return 0
		}
		left = running
		if running == 0 && round > 20 {
			// Zombies another process must reap (the shell's, a
			// process's that is not ours): they run nothing.
			return 0
		}
		time.Sleep(2 * time.Millisecond)
	}
	return left
}
