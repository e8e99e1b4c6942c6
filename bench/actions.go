package main

import (
	"fmt"
	"strings"

	"github.com/reika-lsp/reika-lsp/agent/tools"
)

// The tool calls a generated session makes: reads of whole files and of
// ranges, searches, shell commands and edits, each run for real in the
// session's workspace.

// somePkgFile picks a file of the turn's package, now and then of another.
func (g *generator) somePkgFile(tests bool) *fileInfo {
	pkg := g.pkg
	if g.rng.Float64() < 0.15 {
		pkg = pickOne(g, g.src.pkgs)
	}
	ps := g.src.paths(pkg, tests)
	if len(ps) == 0 {
		ps = g.src.paths(pkg, !tests)
	}
	return g.file(pickOne(g, ps))
}

// readWhole reads a file whole when it is short; a longer one in a part
// around one of its declarations.
func (g *generator) readWhole(fi *fileInfo) (Call, string, string, bool) {
	if fi == nil {
		return Call{}, "", "", false
	}
	if len(fi.lines) > 400 {
		return g.readAround(fi)
	}
	c, out, ok := g.run(tools.NameRead, map[string]any{"path": fi.path})
	g.touch(fi, ok)
	return c, out, fmt.Sprintf("read %s (%d lines)", fi.path, len(fi.lines)), ok
}

// readLarge reads a long file whole, as models do now and then.
func (g *generator) readLarge() (Call, string, string, bool) {
	var big []*fileInfo
	for _, p := range g.src.paths(g.pkg, false) {
		if fi := g.file(p); fi != nil && len(fi.lines) > 400 {
			big = append(big, fi)
		}
	}
	if len(big) == 0 {
		return Call{}, "", "", false
	}
	fi := pickOne(g, big)
	c, out, ok := g.run(tools.NameRead, map[string]any{"path": fi.path})
	g.touch(fi, ok)
	return c, out, fmt.Sprintf("read %s whole (%d lines)", fi.path, len(fi.lines)), ok
}

func (g *generator) readRange() (Call, string, string, bool) {
	return g.readAround(g.somePkgFile(g.rng.Float64() < 0.25))
}

// readAround reads 40 to 220 lines around a declaration.
func (g *generator) readAround(fi *fileInfo) (Call, string, string, bool) {
	if fi == nil || len(fi.lines) < 10 {
		return Call{}, "", "", false
	}
	start := 1
	if len(fi.decls) > 0 {
		start = max(1, pickOne(g, fi.decls).Line-g.pick(12))
	}
	end := min(len(fi.lines), start+40+g.pick(180))
	c, out, ok := g.run(tools.NameRead, map[string]any{"path": fi.path, "start_line": start, "end_line": end})
	g.touch(fi, ok)
	return c, out, fmt.Sprintf("read %s lines %d-%d", fi.path, start, end), ok
}

func (g *generator) touch(fi *fileInfo, ok bool) {
	if ok {
		g.touched = append(g.touched, fi)
		g.reads[fi.path]++
	}
}

// grep searches for an identifier of the package, its methods, or a
// common pattern; in the package, or the whole workspace for Go files.
func (g *generator) grep() (Call, string, string, bool) {
	d := pickOne(g, g.decls(g.pkg))
	var pattern string
	switch g.pick(5) {
	case 0:
		pattern = `\b` + d.ident() + `\(`
	case 1:
		if d.Type != "" {
			pattern = `func \(\w+ \*?` + d.Type + `\) `
		} else {
			pattern = `func ` + d.ident()
		}
	case 2:
		pattern = `errors\.New\(|fmt\.Errorf\(`
	case 3:
		pattern = `\b` + d.ident() + `\b`
	default:
		pattern = `(?i)todo|bug|note:`
	}
	args := map[string]any{"pattern": pattern, "path": g.pkg}
	if g.rng.Float64() < 0.3 {
		args = map[string]any{"pattern": pattern, "glob": "*.go"}
	}
	c, out, ok := g.run(tools.NameGrep, args)
	if ok && len(out) > maxSearchOutput && args["path"] == nil {
		args = map[string]any{"pattern": pattern, "path": g.pkg}
		c, out, ok = g.run(tools.NameGrep, args)
	}
	if !ok || len(out) > maxSearchOutput {
		return Call{}, "", "", false
	}
	where := "the workspace"
	if p, _ := args["path"].(string); p != "" {
		where = p
	}
	return c, out, fmt.Sprintf("grep %q in %s (%d lines of output)", pattern, where, strings.Count(out, "\n")), true
}

func (g *generator) glob() (Call, string, string, bool) {
	args := map[string]any{"pattern": "*.go", "path": g.pkg}
	switch g.pick(3) {
	case 1:
		args = map[string]any{"pattern": "**/*_test.go", "path": g.pkg}
	case 2:
		args = map[string]any{"pattern": "**/*.go", "path": strings.SplitN(g.pkg, "/", 2)[0]}
	}
	c, out, ok := g.run(tools.NameGlob, args)
	if !ok || len(out) > maxSearchOutput {
		return Call{}, "", "", false
	}
	return c, out, fmt.Sprintf("glob %s in %s", args["pattern"], args["path"]), true
}

// bash runs one of the shell commands a model uses to look around:
// counts, go doc, go list, a grep piped to head, a sed range.
func (g *generator) bash() (Call, string, string, bool) {
	d := pickOne(g, g.decls(g.pkg))
	fi := g.somePkgFile(false)
	var cmd string
	switch g.pick(8) {
	case 0:
		cmd = fmt.Sprintf("wc -l %s/*.go", g.pkg)
	case 1:
		cmd = fmt.Sprintf("go doc %s %s", g.pkg, d.Name)
	case 2:
		cmd = fmt.Sprintf("grep -n '%s' %s/*.go | head -40", d.ident(), g.pkg)
	case 3:
		if fi == nil {
			return Call{}, "", "", false
		}
		a := 1 + g.pick(max(1, len(fi.lines)-30))
		cmd = fmt.Sprintf("sed -n '%d,%dp' %s", a, a+20+g.pick(40), fi.path)
	case 4:
		cmd = fmt.Sprintf(`go list -f '{{join .Imports "\n"}}' %s`, g.pkg)
	case 5:
		cmd = fmt.Sprintf("grep -c '^func ' %s/*.go", g.pkg)
	case 6:
		cmd = fmt.Sprintf("go doc -short %s", g.pkg)
	default:
		cmd = fmt.Sprintf("gofmt -l %s && echo gofmt: clean", g.pkg)
	}
	c, out, ok := g.run(tools.NameBash, map[string]any{"command": cmd})
	if !ok || len(out) > maxSearchOutput {
		return Call{}, "", "", false
	}
	return c, out, fmt.Sprintf("ran `%s`", cmd), true
}

// edit adds a comment above a declaration of a file read in this turn, at
// most twice a turn.
func (g *generator) edit() (Call, string, string, bool) {
	if g.edits >= 2 || len(g.touched) == 0 {
		return Call{}, "", "", false
	}
	fi := g.touched[len(g.touched)-1-g.pick(min(3, len(g.touched)))]
	if strings.HasSuffix(fi.path, "_test.go") || !strings.HasPrefix(fi.path, g.pkg+"/") {
		return Call{}, "", "", false
	}
	var cands []decl
	for _, d := range fi.decls {
		line := fi.lines[d.Line-1]
		if strings.Count(strings.Join(fi.lines, "\n"), line) == 1 {
			cands = append(cands, d)
		}
	}
	if len(cands) == 0 {
		return Call{}, "", "", false
	}
	d := pickOne(g, cands)
	line := fi.lines[d.Line-1]
	note := fmt.Sprintf("// Note (task %d): %s", g.turn+1, strings.TrimSuffix(g.proseSentence(), "."))
	c, out, ok := g.run(tools.NameEdit, map[string]any{"path": fi.path, "old_string": line, "new_string": note + ".\n" + line})
	if !ok {
		return Call{}, "", "", false
	}
	g.edits++
	delete(g.files, fi.path) // read it again as it is now
	return c, out, fmt.Sprintf("edited %s: a comment above %s", fi.path, d.Name), true
}
