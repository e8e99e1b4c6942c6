package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Session kinds. A package survey (session.go) reads, searches and
// explains a package a task; a bug fix (bugfix_turn.go) finds and fixes a
// bug planted in two or three packages a task: it runs the tests (long
// failing output), reads the failing tests and the code, greps, edits the
// wrong line back with the edit tool, reads the edited file again and runs
// the tests until they pass, and answers citing the lines it changed.
const (
	KindSurvey = "survey"
	KindBugfix = "bugfix"
)

// Kinds are the session kinds, in the order -kinds takes by default.
var Kinds = []string{KindSurvey, KindBugfix}

// kindOf is the kind of seed's session: kinds taken in turn, seed 1 the
// first.
func kindOf(seed int64, kinds []string) string {
	i := (seed - 1) % int64(len(kinds))
	if i < 0 {
		i += int64(len(kinds))
	}
	return kinds[i]
}

// testScript is the workspace's test runner in a bug-fix session. The
// packages are copies of the Go distribution's and do not build outside
// it, and a real `go test` prints timings that differ from run to run; the
// script prints, for each package named, the failure the planted bug
// causes while its wrong line is in the file, and ok once it is fixed.
const testScript = "test.sh"

// bug is a wrong line planted in a package.
type bug struct {
	pkg   string
	path  string
	line  int    // 1-based
	good  string // the line as the distribution has it
	bad   string // the line as planted
	fn    decl   // the function it is in
	tests []decl // the tests that fail, in the package's test files
	test  string // the path of the first failing test's file
	out   string // what the test runner prints while the bug is there
}

// mutations turn a comparison into its neighbour: the off-by-one and
// inverted conditions a refactor leaves.
var mutations = [][2]string{
	{" < ", " <= "}, {" <= ", " < "}, {" > ", " >= "}, {" >= ", " > "},
	{" == ", " != "}, {" != ", " == "},
}

var testFunc = regexp.MustCompile(`^func (Test\w+)\(t \*testing\.T\)`)

// writeBugs writes bugs, and the test runner, into the workspace, and
// returns the files it wrote.
func (g *generator) writeBugs(bugs []*bug) (map[string]string, error) {
	files := map[string]string{}
	for _, b := range bugs {
		fi := g.file(b.path)
		lines := append([]string(nil), fi.lines...)
		lines[b.line-1] = b.bad
		files[b.path] = strings.Join(lines, "\n") + "\n"
		g.files[b.path] = parseFile(b.path, []byte(files[b.path]))
	}
	files[testScript] = runnerScript(bugs)
	for p, data := range files {
		if err := writeFile(g.root, p, data); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// writeFile writes data to the workspace-relative path p under root.
func writeFile(root, p, data string) error {
	return os.WriteFile(filepath.Join(root, filepath.FromSlash(p)), []byte(data), 0o644)
}

// plantOne picks a line of a function of pkg to get wrong: a comparison,
// unique in its file before and after, in a package with tests.
func (g *generator) plantOne(pkg string) *bug {
	tests, testPath := g.testsOf(pkg)
	if len(tests) == 0 {
		return nil
	}
	type cand struct {
		fi   *fileInfo
		line int
		bad  string
		fn   decl
	}
	var cands []cand
	for _, p := range g.src.paths(pkg, false) {
		fi := g.file(p)
		if fi == nil {
			continue
		}
		text := strings.Join(fi.lines, "\n")
		for _, d := range fi.decls {
			for i := d.Line; i < len(fi.lines) && fi.lines[i] != "}"; i++ {
				l := fi.lines[i]
				if !strings.HasPrefix(l, "\t") || strings.HasPrefix(strings.TrimSpace(l), "//") || strings.Count(text, l) != 1 {
					continue
				}
				for _, m := range mutations {
					if strings.Count(l, m[0]) == 1 && !strings.Contains(l, m[1]) {
						bad := strings.Replace(l, m[0], m[1], 1)
						if !strings.Contains(text, bad) {
							cands = append(cands, cand{fi, i + 1, bad, d})
						}
						break
					}
				}
			}
		}
	}
	if len(cands) == 0 {
		return nil
	}
	c := pickOne(g, cands)
	b := &bug{pkg: pkg, path: c.fi.path, line: c.line, good: c.fi.lines[c.line-1], bad: c.bad, fn: c.fn, test: testPath}
	n := 2 + g.pick(min(5, len(tests)-1)+1)
	for _, i := range g.rng.Perm(len(tests))[:min(n, len(tests))] {
		b.tests = append(b.tests, tests[i])
	}
	sort.Slice(b.tests, func(i, j int) bool { return b.tests[i].Line < b.tests[j].Line })
	b.out = g.failure(b)
	return b
}

// testsOf lists the tests of pkg's first test file that has any, and
// that file's path.
func (g *generator) testsOf(pkg string) ([]decl, string) {
	for _, p := range g.src.paths(pkg, true) {
		fi := g.file(p)
		if fi == nil {
			continue
		}
		var out []decl
		for i, l := range fi.lines {
			if m := testFunc.FindStringSubmatch(l); m != nil {
				out = append(out, decl{Name: m[1], Line: i + 1})
			}
		}
		if len(out) >= 2 {
			return out, p
		}
	}
	return nil, ""
}

var (
	errorCall = regexp.MustCompile(`t\.(?:Errorf|Fatalf|Error|Fatal)\("((?:[^"\\]|\\.)*)"`)
	verb      = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)
)

// failure is what `go test` prints for pkg while b is planted: each
// failing test's messages (its own t.Errorf formats, filled in), now and
// then a panic's stack through the wrong function, and the FAIL lines.
func (g *generator) failure(b *bug) string {
	fi := g.file(b.test)
	var out strings.Builder
	for _, t := range b.tests {
		fmt.Fprintf(&out, "--- FAIL: %s (0.00s)\n", t.Name)
		var calls []int
		for i := t.Line; i < len(fi.lines) && fi.lines[i] != "}"; i++ {
			if errorCall.MatchString(fi.lines[i]) {
				calls = append(calls, i)
			}
		}
		if len(calls) == 0 {
			calls = []int{t.Line - 1}
		}
		for range 2 + g.pick(24) {
			i := pickOne(g, calls)
			msg := "unexpected result"
			if m := errorCall.FindStringSubmatch(fi.lines[i]); m != nil {
				msg = verb.ReplaceAllStringFunc(m[1], func(string) string { return fmt.Sprint(g.pick(300)) })
			}
			fmt.Fprintf(&out, "    %s:%d: %s\n", filepath.Base(b.test), i+1, strings.ReplaceAll(msg, `\n`, " "))
		}
	}
	if g.rng.Float64() < 0.35 {
		g.panicTrace(&out, b)
	}
	fmt.Fprintf(&out, "FAIL\nFAIL\t%s\t0.%03ds\nFAIL\n", b.pkg, 5+g.pick(400))
	return out.String()
}

// panicTrace writes a goroutine's stack from the wrong line up through
// other functions of the package to the test.
func (g *generator) panicTrace(out *strings.Builder, b *bug) {
	fmt.Fprintf(out, "panic: runtime error: index out of range [%d] with length %d [recovered]\n\n", 3+g.pick(60), 3+g.pick(60))
	fmt.Fprintf(out, "goroutine %d [running]:\ntesting.tRunner.func1.2({0x5a1c20, 0xc0000a2018})\n\ttesting/testing.go:1734 +0x21c\n", 6+g.pick(30))
	fmt.Fprintf(out, "panic({0x5a1c20?, 0xc0000a2018?})\n\truntime/panic.go:792 +0x132\n")
	fmt.Fprintf(out, "%s.%s(...)\n\t%s:%d +0x%x\n", b.pkg, frameName(b.fn), b.path, b.line, 16+g.pick(400))
	for _, p := range g.src.paths(b.pkg, false) {
		fi := g.file(p)
		if fi == nil || len(fi.decls) == 0 || g.rng.Float64() < 0.5 {
			continue
		}
		d := pickOne(g, fi.decls)
		fmt.Fprintf(out, "%s.%s(...)\n\t%s:%d +0x%x\n", b.pkg, frameName(d), p, d.Line+1+g.pick(5), 16+g.pick(400))
	}
	t := b.tests[0]
	fmt.Fprintf(out, "%s.%s(0xc000103a00)\n\t%s:%d +0x%x\ntesting.tRunner(0xc000103a00, 0x5d2f18)\n\ttesting/testing.go:1792 +0xf4\n",
		b.pkg, t.Name, b.test, t.Line+2, 16+g.pick(400))
	fmt.Fprintf(out, "created by testing.(*T).Run in goroutine 1\n\ttesting/testing.go:1851 +0x413\nexit status 2\n")
}

// runnerScript is the test runner of a session's bugs: for each package
// named, the bug's failure while its wrong line is in the file, else ok.
func runnerScript(bugs []*bug) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# sh test.sh PKG...: runs the tests of the workspace's packages, as go test prints them.\nstatus=0\nfor p in \"$@\"; do\n  p=${p#./}; p=${p%/}\n  case \"$p\" in\n")
	for i, bg := range bugs {
		fmt.Fprintf(&b, "  %s)\n    if grep -qxF %s %s; then\n      cat <<'__OUT_%d__'\n%s__OUT_%d__\n      status=1\n      continue\n    fi\n    ;;\n",
			bg.pkg, shellQuote(bg.bad), shellQuote(bg.path), i, bg.out, i)
	}
	b.WriteString("  esac\n  printf 'ok  \\t%s\\t0.%03ds\\n' \"$p\" $(( ${#p} * 7 % 400 + 5 ))\ndone\nexit $status\n")
	return b.String()
}

// frameName is d as a stack trace names it: Split, (*Reader).Read.
func frameName(d decl) string {
	if d.Type != "" {
		return "(*" + d.Type + ")." + d.ident()
	}
	return d.Name
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
