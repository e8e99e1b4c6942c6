// Package bug reports a recovered panic — a bug in reika-lsp — as gopls's
// bug package does: the program goes on, and the user is told in one line
// where the report is, with the panic and its stack in a file they can
// attach to an issue.
package bug

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// Keep is how many reports a directory keeps: the oldest beyond it are
// removed, so a bug that repeats cannot fill the disk.
const Keep = 20

// Dir is the directory of the reports under a state directory.
func Dir(stateDir string) string { return filepath.Join(stateDir, "reports") }

// Report is a recovered panic. It is an error whose text is the line the
// user is told.
type Report struct {
	Where string // what was running: "handling workspace/executeCommand"
	Value any    // the panic's value
	Path  string // the report file; "" when it could not be written
	Err   error  // why it could not
}

// Write writes the report of a panic with value while doing where, with
// the stack (debug.Stack() in the deferred function that recovered it),
// into dir, and returns it. A report that cannot be written says why.
func Write(dir, where string, value any, stack []byte) *Report {
	r := &Report{Where: where, Value: value}
	r.Path, r.Err = write(dir, r.text(stack))
	return r
}

// Error is the one line the user is told: what happened and where the
// report is.
func (r *Report) Error() string {
	line := fmt.Sprintf("internal error (a bug in reika-lsp) while %s: %s", r.Where, firstLine(fmt.Sprint(r.Value)))
	if r.Err != nil {
		return line + fmt.Sprintf(" (no report: %v)", r.Err)
	}
	return line + "; report: " + r.Path
}

func (r *Report) text(stack []byte) string {
	var b strings.Builder
	b.WriteString("reika-lsp bug report: please attach it to an issue (it may quote your code or prompts)\n\n")
	fmt.Fprintf(&b, "time:    %s\n", time.Now().UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "while:   %s\n", r.Where)
	fmt.Fprintf(&b, "panic:   %v\n", r.Value)
	fmt.Fprintf(&b, "go:      %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if info, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintf(&b, "module:  %s %s\n", info.Main.Path, info.Main.Version)
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
				fmt.Fprintf(&b, "%s: %s\n", s.Key, s.Value)
			}
		}
	}
	b.WriteString("\n")
	b.Write(stack)
	return b.String()
}

// write puts text in a new file of dir and removes the oldest reports
// beyond Keep.
func write(dir, text string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "bug-"+time.Now().UTC().Format("20060102-150405.000000000")+"-*.txt")
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	prune(dir, f.Name())
	return f.Name(), nil
}

// prune removes the oldest reports of dir beyond Keep (their names begin
// with the time, so the order of names is the order of time), never the
// one just written.
func prune(dir, written string) {
	names, _ := filepath.Glob(filepath.Join(dir, "bug-*.txt"))
	if len(names) <= Keep {
		return
	}
	slices.Sort(names)
	for _, name := range names[:len(names)-Keep] {
		if name != written {
			os.Remove(name)
		}
	}
}

func firstLine(s string) string {
	line, _, cut := strings.Cut(s, "\n")
	if r := []rune(line); len(r) > 200 {
		return string(r[:199]) + "…"
	} else if cut {
		return line + " …"
	}
	return line
}
