package tools

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// prSetDumpable is prctl's PR_SET_DUMPABLE.
const prSetDumpable = 4

// hideFromChildren overwrites the values of the secret entries of this
// process's environment block (the bytes /proc/self/environ shows, between
// env_start and env_end of /proc/self/stat) with NULs, through
// /proc/self/mem, and, when nondumpable, marks the process non-dumpable.
func hideFromChildren(secret func(kv string) bool, nondumpable bool) error {
	if nondumpable {
		if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0); errno != 0 {
			return fmt.Errorf("hiding the API key from commands: prctl(PR_SET_DUMPABLE): %w", errno)
		}
	}
	start, end, err := environBlock()
	if err != nil {
		return fmt.Errorf("hiding the API key from commands: %w", err)
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("hiding the API key from commands: %w", err)
	}
	defer mem.Close()
	block := make([]byte, end-start)
	if _, err := mem.ReadAt(block, start); err != nil {
		return fmt.Errorf("hiding the API key from commands: reading the environment: %w", err)
	}
	for off := 0; off < len(block); {
		n := bytes.IndexByte(block[off:], 0)
		if n < 0 {
			n = len(block) - off
		}
		entry := block[off : off+n]
		if eq := bytes.IndexByte(entry, '='); eq >= 0 && secret(string(entry)) && len(entry) > eq+1 {
			zeros := make([]byte, len(entry)-eq-1)
			if _, err := mem.WriteAt(zeros, start+int64(off+eq+1)); err != nil {
				return fmt.Errorf("hiding the API key from commands: overwriting %s: %w", entry[:eq], err)
			}
		}
		off += n + 1
	}
	return nil
}

// environBlock is where this process's environment strings lie
// (env_start and env_end, fields 50 and 51 of /proc/self/stat).
func environBlock() (start, end int64, err error) {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, err
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("/proc/self/stat: no command name")
	}
	fields := strings.Fields(string(stat[i+1:])) // fields[0] is field 3
	if len(fields) < 49 {
		return 0, 0, fmt.Errorf("/proc/self/stat: %d fields, want 51", len(fields)+2)
	}
	s, err1 := strconv.ParseInt(fields[47], 10, 64)
	e, err2 := strconv.ParseInt(fields[48], 10, 64)
	if err1 != nil || err2 != nil || e < s {
		return 0, 0, fmt.Errorf("/proc/self/stat: bad env_start or env_end (%q, %q)", fields[47], fields[48])
	}
	return s, e, nil
}
