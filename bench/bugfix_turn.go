package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/reika-lsp/reika-lsp/agent/tools"
)

// A bug-fix task: the bugs of two or three packages, planted when the
// session starts (bugfix.go). Its rounds, in order: the tests of every
// package run and fail; for each bug, the failing test read, the function
// read around the wrong line (a search for it when there is room), the
// line fixed with the edit tool, the edited part read again and the
// package's tests run; at the end every package's tests pass. Reads,
// searches and commands of a survey (no comment edits) fill the rest, in
// between. The answer cites the fixed lines, the failing tests and the
// fixed function's code, all as the turn's reads showed them.

// planBugs plants the bugs of turns bug-fix tasks, two or three packages
// each, taking pkgs in order, and writes them and the test runner into
// the workspace. It returns each task's bugs and the files written.
func (g *generator) planBugs(pkgs []string, turns int) ([][]*bug, map[string]string, error) {
	var groups [][]*bug
	var all []*bug
	i := 0
	for len(groups) < turns && i < len(pkgs) {
		size := 2 + g.pick(2)
		var grp []*bug
		for len(grp) < size && i < len(pkgs) {
			if b := g.plantOne(pkgs[i]); b != nil {
				grp = append(grp, b)
			}
			i++
		}
		if len(grp) > 0 {
			groups = append(groups, grp)
			all = append(all, grp...)
		}
	}
	if len(groups) < turns {
		return nil, nil, fmt.Errorf("bugs for %d tasks of %d", len(groups), turns)
	}
	files, err := g.writeBugs(all)
	return groups, files, err
}

var bugfixPrompts = []string{
	"The tests of %[1]s fail since the last refactor. Find out why and fix it; run them with `sh test.sh %[2]s` until they pass.",
	"`sh test.sh %[2]s` fails: %[3]s. Track the bug down, fix it with the smallest change, and check that the tests pass.",
	"Someone changed a comparison somewhere in %[1]s and now tests fail (%[3]s). Fix it and tell me which lines were wrong.",
	"CI is red on %[1]s: %[3]s. Find the cause in each package, fix it, rerun the tests (`sh test.sh %[2]s`) and explain what was wrong.",
}

// planned is a round of a bug-fix task: its action and the bug it works on.
type planned struct {
	act action
	b   *bug
}

// writeBugfixTurn writes bug-fix task t on bugs.
func (g *generator) writeBugfixTurn(t int, bugs []*bug) (Turn, error) {
	g.turn, g.touched, g.edits = t, nil, 0
	var pkgs, failing []string
	for _, b := range bugs {
		pkgs = append(pkgs, b.pkg)
		failing = append(failing, fmt.Sprintf("%s in %s", b.tests[0].Name, b.pkg))
	}
	list := strings.Join(pkgs[:len(pkgs)-1], ", ") + " and " + pkgs[len(pkgs)-1]
	prompt := fmt.Sprintf(pickOne(g, bugfixPrompts), list, strings.Join(pkgs, " "), strings.Join(failing, ", "))
	prompt = fmt.Sprintf("%s (task %d)", prompt, t+1)
	n := minTurnSteps + g.pick(maxTurnSteps-minTurnSteps+1)
	plan := g.planTurn(bugs, pkgs, n-1)
	turn := Turn{Prompt: prompt}
	for s, p := range plan {
		g.pkg, g.subject = p.b.pkg, p.b.fn
		st, err := g.step(t, s, []action{p.act})
		if err != nil {
			return Turn{}, err
		}
		turn.Steps = append(turn.Steps, st)
	}
	g.pkg, g.subject = bugs[0].pkg, bugs[0].fn
	reasoning := g.maybeReasoning(0.5)
	answer, facts := g.bugfixAnswer(bugs, pkgs)
	turn.Steps = append(turn.Steps, Step{Reasoning: reasoning, Content: answer})
	turn.Facts = facts
	return turn, nil
}

// planTurn is the n rounds of a task on bugs: the rounds every task has,
// a search per bug where there is room, and fillers in between.
func (g *generator) planTurn(bugs []*bug, pkgs []string, n int) []planned {
	must := 2 + 5*len(bugs)
	plan := []planned{{g.runTests(pkgs), bugs[0]}}
	for _, b := range bugs {
		plan = append(plan, planned{g.readTest(b), b})
		if must < n {
			must++
			plan = append(plan, planned{g.grepFor(b), b})
		}
		plan = append(plan, planned{g.readBug(b), b}, planned{g.fix(b), b}, planned{g.reread(b), b},
			planned{g.runTests([]string{b.pkg}), b})
	}
	for len(plan) < n-1 {
		at := 1 + g.pick(len(plan)-1)
		plan = slices.Insert(plan, at, planned{g.filler(), plan[at-1].b})
	}
	return append(plan, planned{g.runTests(pkgs), bugs[len(bugs)-1]})
}

// filler is a round of looking around: reads, searches, commands.
func (g *generator) filler() action {
	r := g.pick(100)
	switch {
	case r < 30:
		return func() (Call, string, string, bool) { return g.readWhole(g.somePkgFile(false)) }
	case r < 55:
		return g.readRange
	case r < 65:
		return func() (Call, string, string, bool) { return g.readWhole(g.somePkgFile(true)) }
	case r < 85:
		return g.grep
	case r < 95:
		return g.bash
	default:
		return g.glob
	}
}

// runTests runs the test runner on pkgs.
func (g *generator) runTests(pkgs []string) action {
	return func() (Call, string, string, bool) {
		cmd := "sh " + testScript + " " + strings.Join(pkgs, " ")
		c, out, ok := g.run(tools.NameBash, map[string]any{"command": cmd})
		return c, out, fmt.Sprintf("ran `%s` (%d lines of output)", cmd, strings.Count(out, "\n")), ok
	}
}

// readAt reads fi from line from to line to.
func (g *generator) readAt(fi *fileInfo, from, to int) (Call, string, string, bool) {
	from, to = max(1, from), min(len(fi.lines), to)
	c, out, ok := g.run(tools.NameRead, map[string]any{"path": fi.path, "start_line": from, "end_line": to})
	g.touch(fi, ok)
	return c, out, fmt.Sprintf("read %s lines %d-%d", fi.path, from, to), ok
}

// readTest reads the first failing test.
func (g *generator) readTest(b *bug) action {
	return func() (Call, string, string, bool) {
		t := b.tests[0].Line
		return g.readAt(g.file(b.test), t-g.pick(6), t+30+g.pick(60))
	}
}

// grepFor searches the package for the wrong function's name.
func (g *generator) grepFor(b *bug) action {
	return func() (Call, string, string, bool) {
		pattern := `\b` + b.fn.ident() + `\(`
		c, out, ok := g.run(tools.NameGrep, map[string]any{"pattern": pattern, "path": b.pkg})
		if !ok || len(out) > maxSearchOutput {
			return Call{}, "", "", false
		}
		return c, out, fmt.Sprintf("grep %q in %s (%d lines of output)", pattern, b.pkg, strings.Count(out, "\n")), true
	}
}

// readBug reads the wrong function from its start past the wrong line.
func (g *generator) readBug(b *bug) action {
	return func() (Call, string, string, bool) {
		return g.readAt(g.file(b.path), b.fn.Line-g.pick(8), b.line+10+g.pick(50))
	}
}

// fix puts the wrong line right with the edit tool.
func (g *generator) fix(b *bug) action {
	return func() (Call, string, string, bool) {
		c, out, ok := g.run(tools.NameEdit, map[string]any{"path": b.path, "old_string": b.bad, "new_string": b.good})
		if !ok {
			return Call{}, "", "", false
		}
		g.edits++
		delete(g.files, b.path) // read it again as it is now
		return c, out, fmt.Sprintf("edited %s:%d in %s: %s", b.path, b.line, b.fn.Name, strings.TrimSpace(b.good)), true
	}
}

// reread reads the fixed part of the file again.
func (g *generator) reread(b *bug) action {
	return func() (Call, string, string, bool) {
		return g.readAt(g.file(b.path), b.line-6-g.pick(10), b.line+6+g.pick(20))
	}
}

// bugfixAnswer is a bug-fix task's answer: for each bug the line that was
// wrong and is fixed, the function it is in and the test that caught it,
// the fixed code quoted, and a closing paragraph; and the facts it uses.
func (g *generator) bugfixAnswer(bugs []*bug, pkgs []string) (string, []Fact) {
	var b strings.Builder
	var facts []Fact
	fmt.Fprintf(&b, "The tests of %s pass now. What was wrong:\n\n", strings.Join(pkgs, ", "))
	for _, bg := range bugs {
		fi, ti := g.file(bg.path), g.file(bg.test)
		fn, test := bg.fn, bg.tests[0]
		fmt.Fprintf(&b, "- %s:%d, in `%s` (%s:%d): the line read `%s`; it is `%s` again. `%s` (%s:%d) caught it",
			bg.path, bg.line, fn.Name, bg.path, fn.Line, strings.TrimSpace(bg.bad), strings.TrimSpace(bg.good), test.Name, bg.test, test.Line)
		if len(bg.tests) > 1 {
			fmt.Fprintf(&b, ", with %d other tests", len(bg.tests)-1)
		}
		b.WriteString(".\n")
		facts = append(facts,
			Fact{Path: bg.path, Line: bg.line, Lines: []string{fi.lines[bg.line-1]}},
			Fact{Path: bg.path, Line: fn.Line, Name: fn.ident(), Lines: []string{fi.lines[fn.Line-1]}},
			Fact{Path: bg.test, Line: test.Line, Name: test.Name, Lines: []string{ti.lines[test.Line-1]}})
	}
	bg := pickOne(g, bugs)
	fi := g.file(bg.path)
	a, z := max(1, bg.line-3), min(len(fi.lines), bg.line+3)
	quoted := fi.lines[a-1 : z]
	fmt.Fprintf(&b, "\nThe fixed code, from %s lines %d-%d:\n\n```go\n%s\n```\n\n", bg.path, a, z, strings.Join(quoted, "\n"))
	facts = append(facts, Fact{Path: bg.path, Line: a, Lines: slices.Clone(quoted)})
	words := 60 + g.pick(300)
	b.WriteString(trimWords(g.prose(words*6), words))
	fmt.Fprintf(&b, "\n\nI changed %d line(s), one in each package, and nothing else; `sh %s %s` passes.", g.edits, testScript, strings.Join(pkgs, " "))
	return b.String(), facts
}
