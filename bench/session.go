package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/reika-lsp/reika-lsp/agent/approval"
	"github.com/reika-lsp/reika-lsp/agent/tools"
)

// A session is a scripted sequence of model turns: user tasks, each worked
// through in rounds of tool calls on real files of the Go distribution
// (reads, greps, globs, shell commands, edits) with some reasoning and a
// short remark here and there, ending in an answer. The tools run once,
// when the session is generated, on a workspace of its own; their outputs
// are part of the session, so every policy sees the same ones. Everything
// derives from the seed.
type Session struct {
	Seed int64 `json:"seed"`
	// Kind is the session's kind: KindSurvey or KindBugfix (bugfix.go).
	Kind  string `json:"kind"`
	Turns []Turn `json:"turns"`
	// Files are what the workspace has besides the Go distribution's
	// files, written over them before the first task: a bug-fix session's
	// planted bugs and test runner.
	Files map[string]string `json:"files,omitempty"`
}

// Turn is one user task.
type Turn struct {
	Prompt string `json:"prompt"`
	Steps  []Step `json:"steps"`
	// Facts are what the turn's answer (its last step) uses: the
	// declarations it cites and the code it quotes (retention.go).
	Facts []Fact `json:"facts,omitempty"`
}

// Step is one model reply and the results of its tool calls. A step
// without calls is the turn's answer.
type Step struct {
	Reasoning string `json:"reasoning,omitempty"`
	Content   string `json:"content,omitempty"`
	Calls     []Call `json:"calls,omitempty"`
	// Outputs are the tools' results, one per call, as the model is shown
	// them before any context management.
	Outputs []string `json:"outputs,omitempty"`
	// Did says in one line per call what the step did; Finding is what it
	// established. Notes and summaries are written from them.
	Did     []string `json:"did,omitempty"`
	Finding string   `json:"finding,omitempty"`
}

// Call is one tool call.
type Call struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Args string `json:"args"` // JSON text
}

// Rounds is the number of model replies in the session.
func (s *Session) Rounds() int {
	n := 0
	for _, t := range s.Turns {
		n += len(t.Steps)
	}
	return n
}

// Round is the 0-based number of step of turn in the whole session.
func (s *Session) Round(turn, step int) int {
	n := 0
	for _, t := range s.Turns[:turn] {
		n += len(t.Steps)
	}
	return n + step
}

// callID names call j of step of turn; the position can be read back
// from it (parseCallID).
func callID(turn, step, j int) string { return fmt.Sprintf("call_%d_%d_%d", turn, step, j) }

var callIDPattern = regexp.MustCompile(`^call_(\d+)_(\d+)_(\d+)$`)

func parseCallID(id string) (turn, step int, ok bool) {
	m := callIDPattern.FindStringSubmatch(id)
	if m == nil {
		return 0, 0, false
	}
	fmt.Sscan(m[1], &turn)
	fmt.Sscan(m[2], &step)
	return turn, step, true
}

// Limits of generated tool calls. A grep, glob or shell command whose
// output passes maxSearchOutput is replaced by a narrower one, as a model
// narrows a search that floods it; reads follow the read tool's own caps.
const (
	maxSearchOutput = 12 << 10
	minTurnSteps    = 18
	maxTurnSteps    = 33
)

// decl is a top-level declaration of a Go file.
type decl struct {
	Name string // Builder, Builder.Grow, Split
	Type string // the receiver's type, for methods
	Line int    // 1-based
	Doc  string // its doc comment, as prose
}

// fileInfo is what the generator knows of a file as it is now.
type fileInfo struct {
	path  string
	lines []string
	decls []decl
}

var (
	funcLine = regexp.MustCompile(`^func (?:\(\w+ \*?(\w+)(?:\[[^\]]*\])?\) )?(\w+)`)
	typeLine = regexp.MustCompile(`^type (\w+)`)
)

func parseFile(path string, data []byte) *fileInfo {
	fi := &fileInfo{path: path, lines: strings.Split(strings.TrimRight(string(data), "\n"), "\n")}
	var doc []string
	for i, l := range fi.lines {
		if strings.HasPrefix(l, "//") && !strings.HasPrefix(l, "//go:") {
			doc = append(doc, strings.TrimSpace(strings.TrimPrefix(l, "//")))
			continue
		}
		d := decl{Line: i + 1, Doc: strings.Join(doc, " ")}
		doc = nil
		if m := funcLine.FindStringSubmatch(l); m != nil {
			d.Name, d.Type = m[2], m[1]
			if d.Type != "" {
				d.Name = d.Type + "." + d.Name
			}
		} else if m := typeLine.FindStringSubmatch(l); m != nil {
			d.Name = m[1]
		} else {
			continue
		}
		fi.decls = append(fi.decls, d)
	}
	return fi
}

// exported reports whether a declaration's (last) name is exported.
func (d decl) exported() bool {
	name := d.Name[strings.LastIndexByte(d.Name, '.')+1:]
	return name != "" && name[0] >= 'A' && name[0] <= 'Z'
}

// ident is the declaration's bare name.
func (d decl) ident() string { return d.Name[strings.LastIndexByte(d.Name, '.')+1:] }

// sentence is the first sentence of a doc comment.
func sentence(doc string) string {
	if i := strings.Index(doc, ". "); i > 0 {
		return doc[:i+1]
	}
	return doc
}

// generator writes one session.
type generator struct {
	rng   *rand.Rand
	src   *source
	root  string
	env   *tools.Env
	tools []tools.Tool
	files map[string]*fileInfo // workspace-relative path → as it is now
	reads map[string]int       // how often each file was read whole or in part

	// The turn being written.
	turn    int
	pkg     string
	subject decl
	touched []*fileInfo // files read in this turn, newest last
	edits   int
}

// Generate writes the package survey of seed (GenerateKind).
func Generate(src *source, dir string, seed int64, minRounds int) (*Session, error) {
	return GenerateKind(src, dir, seed, minRounds, KindSurvey)
}

// GenerateKind writes the session of seed of the given kind: turns of 18
// to 33 rounds until it has at least minRounds rounds. It runs the tools
// in a workspace of its own under dir.
func GenerateKind(src *source, dir string, seed int64, minRounds int, kind string) (*Session, error) {
	root, err := src.materialize(filepath.Join(dir, "ws"))
	if err != nil {
		return nil, err
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}
	g := &generator{
		rng:   rand.New(rand.NewSource(seed)),
		src:   src,
		root:  root,
		tools: tools.All(),
		files: map[string]*fileInfo{},
		reads: map[string]int{},
		env: &tools.Env{Root: root, Files: tools.DiskFiles{}, TempDir: tmp,
			Approve: func(context.Context, approval.Request) bool { return true }},
	}
	s := &Session{Seed: seed, Kind: kind}
	pkgs := append([]string(nil), src.pkgs...)
	g.rng.Shuffle(len(pkgs), func(i, j int) { pkgs[i], pkgs[j] = pkgs[j], pkgs[i] })
	var groups [][]*bug
	switch kind {
	case KindSurvey:
	case KindBugfix:
		if groups, s.Files, err = g.planBugs(pkgs, (minRounds+minTurnSteps-1)/minTurnSteps); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown session kind %q", kind)
	}
	for t := 0; s.Rounds() < minRounds; t++ {
		var turn Turn
		if groups != nil {
			turn, err = g.writeBugfixTurn(t, groups[t])
		} else {
			turn, err = g.writeTurn(t, pkgs[t%len(pkgs)])
		}
		if err != nil {
			return nil, err
		}
		s.Turns = append(s.Turns, turn)
	}
	return s, nil
}

// file returns what the generator knows of path, reading it from the
// workspace the first time.
func (g *generator) file(path string) *fileInfo {
	if fi, ok := g.files[path]; ok {
		return fi
	}
	data, err := os.ReadFile(filepath.Join(g.root, filepath.FromSlash(path)))
	if err != nil {
		return nil
	}
	fi := parseFile(path, data)
	g.files[path] = fi
	return fi
}

func (g *generator) pick(n int) int { return g.rng.Intn(n) }

func pickOne[T any](g *generator, s []T) T { return s[g.rng.Intn(len(s))] }

// decls lists the package's documented exported declarations.
func (g *generator) decls(pkg string) []decl {
	var out []decl
	for _, p := range g.src.paths(pkg, false) {
		if fi := g.file(p); fi != nil {
			for _, d := range fi.decls {
				if d.exported() && len(d.Doc) > 40 {
					out = append(out, d)
				}
			}
		}
	}
	return out
}

// fileOf is the file of the package that declares d.
func (g *generator) fileOf(pkg string, d decl) *fileInfo {
	for _, p := range g.src.paths(pkg, false) {
		if fi := g.file(p); fi != nil {
			for _, e := range fi.decls {
				if e.Name == d.Name && e.Line == d.Line {
					return fi
				}
			}
		}
	}
	return nil
}

var promptTemplates = []string{
	"How does %[1]s handle %[2]s? Walk me through the code and point out anything surprising.",
	"I think there is an edge case in %[2]s (package %[1]s). Find where it is handled, read the tests, and add a short comment where the behaviour is subtle.",
	"Review package %[1]s for error handling: which functions can fail, and how do callers in the package deal with it? Start from %[2]s.",
	"Write up how %[1]s is structured: the main types, who calls what, and where the tests cover %[2]s.",
	"Find every place in the workspace that uses %[2]s from %[1]s and summarise how it is used.",
	"Look at %[3]s: is %[2]s correct for empty and very large inputs? Check the tests and document what you find in comments.",
}

// writeTurn writes turn t on package pkg.
func (g *generator) writeTurn(t int, pkg string) (Turn, error) {
	g.turn, g.pkg, g.touched, g.edits = t, pkg, nil, 0
	ds := g.decls(pkg)
	if len(ds) == 0 {
		return Turn{}, fmt.Errorf("package %s has no documented declarations", pkg)
	}
	g.subject = pickOne(g, ds)
	subjectFile := g.fileOf(pkg, g.subject)
	tmpl := g.pick(len(promptTemplates))
	prompt := fmt.Sprintf(promptTemplates[tmpl], pkg, g.subject.Name, subjectFile.path)
	prompt = fmt.Sprintf("%s (task %d)", prompt, t+1)
	turn := Turn{Prompt: prompt}
	n := minTurnSteps + g.pick(maxTurnSteps-minTurnSteps+1)
	for s := 0; s < n-1; s++ {
		var st Step
		var err error
		if s == 0 && strings.Contains(prompt, subjectFile.path) {
			st, err = g.step(t, s, []action{func() (Call, string, string, bool) { return g.readWhole(subjectFile) }})
		} else {
			st, err = g.randomStep(t, s)
		}
		if err != nil {
			return Turn{}, err
		}
		turn.Steps = append(turn.Steps, st)
	}
	reasoning := g.maybeReasoning(0.5)
	answer, facts := g.answer(prompt)
	turn.Steps = append(turn.Steps, Step{Reasoning: reasoning, Content: answer})
	turn.Facts = facts
	return turn, nil
}

// An action writes one tool call, runs it, and returns the call, its
// output, what it did, and false when it cannot be made.
type action func() (Call, string, string, bool)

func (g *generator) randomStep(t, s int) (Step, error) {
	calls := 1
	if g.rng.Float64() < 0.12 {
		calls = 2
	}
	var acts []action
	for range calls {
		acts = append(acts, g.randomAction())
	}
	return g.step(t, s, acts)
}

// randomAction picks what the model does next, weighted roughly as
// coding agents' traces are: mostly reads and searches.
func (g *generator) randomAction() action {
	r := g.pick(100)
	switch {
	case r < 26:
		return func() (Call, string, string, bool) { return g.readWhole(g.somePkgFile(false)) }
	case r < 46:
		return g.readRange
	case r < 54:
		return func() (Call, string, string, bool) { return g.readWhole(g.somePkgFile(true)) }
	case r < 57:
		return g.readLarge
	case r < 75:
		return g.grep
	case r < 89:
		return g.bash
	case r < 94:
		return g.glob
	default:
		return g.edit
	}
}

// step makes the calls (falling back to a range read when one cannot be
// made) and dresses them with reasoning and a remark.
func (g *generator) step(t, s int, acts []action) (Step, error) {
	st := Step{}
	for j, act := range acts {
		var (
			c       Call
			out, do string
			ok      bool
		)
		for try := 0; try < 6 && !ok; try++ {
			if try > 0 {
				act = g.readRange
			}
			c, out, do, ok = act()
		}
		if !ok {
			return Step{}, fmt.Errorf("turn %d step %d: no tool call could be made", t, s)
		}
		c.ID = callID(t, s, j)
		st.Calls = append(st.Calls, c)
		st.Outputs = append(st.Outputs, out)
		st.Did = append(st.Did, do)
	}
	st.Reasoning = g.maybeReasoning(0.55)
	if g.rng.Float64() < 0.35 {
		st.Content = g.remark(st.Did[0])
	}
	st.Finding = g.finding()
	return st, nil
}

// run runs a tool the way the agent would.
func (g *generator) run(name string, args map[string]any) (Call, string, bool) {
	raw, err := json.Marshal(args)
	if err != nil {
		return Call{}, "", false
	}
	res, err := tools.Call(context.Background(), g.env, g.tools, name, raw)
	if err != nil || res.IsError {
		return Call{}, "", false
	}
	return Call{Name: name, Args: string(raw)}, res.Text, true
}

// proseSentence is a sentence of the Go distribution's doc comments.
func (g *generator) proseSentence() string {
	var docs []string
	for _, d := range g.decls(g.pkg) {
		docs = append(docs, sentence(d.Doc))
	}
	if len(docs) == 0 {
		return "This needs a closer look."
	}
	return pickOne(g, docs)
}

// prose is n or more characters of the package's doc comments.
func (g *generator) prose(n int) string {
	ds := g.decls(g.pkg)
	var b strings.Builder
	for b.Len() < n && len(ds) > 0 {
		d := pickOne(g, ds)
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(d.Doc)
	}
	return b.String()
}

var reasoningOpeners = []string{
	"The user wants to know about %s. ",
	"So far the relevant code is around %s. ",
	"I need to check how %s behaves at the boundaries. ",
	"Let me think about what %s does with its inputs. ",
	"The doc comment of %s says the following, which I should verify against the code. ",
}

// maybeReasoning is the reasoning of a step, with probability p: 30 to
// 250 words built on the package's own documentation.
func (g *generator) maybeReasoning(p float64) string {
	if g.rng.Float64() >= p {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, pickOne(g, reasoningOpeners), g.subject.Name)
	words := 30 + g.pick(220)
	b.WriteString(trimWords(g.prose(words*6), words))
	if len(g.touched) > 0 {
		fi := g.touched[len(g.touched)-1]
		fmt.Fprintf(&b, " %s has %d lines and %d top-level declarations; next I should look at the callers.", fi.path, len(fi.lines), len(fi.decls))
	}
	return b.String()
}

func trimWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[:n]
	}
	return strings.Join(f, " ")
}

func (g *generator) remark(did string) string {
	return fmt.Sprintf(pickOne(g, []string{
		"Let me check this next: %s.",
		"Next: %s.",
		"I'll look at the code before answering (%s).",
		"To confirm, %s.",
	}), did)
}

// finding is what a step established: a declaration with its line and the
// first sentence of its doc comment.
func (g *generator) finding() string {
	if len(g.touched) == 0 {
		return ""
	}
	fi := g.touched[len(g.touched)-1]
	var ds []decl
	for _, d := range fi.decls {
		if d.Doc != "" {
			ds = append(ds, d)
		}
	}
	if len(ds) == 0 {
		return ""
	}
	d := pickOne(g, ds)
	return fmt.Sprintf("%s (%s:%d): %s", d.Name, fi.path, d.Line, sentence(d.Doc))
}

// answer is a turn's final answer: 150 to 700 words of findings with line
// numbers, a quoted piece of code, and a closing paragraph; and the facts
// it uses.
func (g *generator) answer(prompt string) (string, []Fact) {
	var b strings.Builder
	var facts []Fact
	fmt.Fprintf(&b, "Here is what I found about %s in package %s.\n\n", g.subject.Name, g.pkg)
	seen := map[string]bool{}
	items := 3 + g.pick(6)
	for i := 0; i < items && i < 4*len(g.touched); i++ {
		fi := pickOne(g, g.touched)
		if len(fi.decls) == 0 {
			continue
		}
		d := pickOne(g, fi.decls)
		if seen[d.Name] || d.Doc == "" {
			continue
		}
		seen[d.Name] = true
		fmt.Fprintf(&b, "- `%s` (%s:%d): %s\n", d.Name, fi.path, d.Line, sentence(d.Doc))
		facts = append(facts, Fact{Path: fi.path, Line: d.Line, Name: d.ident(), Lines: []string{fi.lines[d.Line-1]}})
	}
	if len(g.touched) > 0 {
		fi := pickOne(g, g.touched)
		a := g.pick(max(1, len(fi.lines)-25))
		n := 8 + g.pick(18)
		quoted := fi.lines[a:min(a+n, len(fi.lines))]
		fmt.Fprintf(&b, "\nThe core of it, from %s lines %d-%d:\n\n```go\n%s\n```\n\n", fi.path, a+1, min(a+n, len(fi.lines)),
			strings.Join(quoted, "\n"))
		facts = append(facts, Fact{Path: fi.path, Line: a + 1, Lines: slices.Clone(quoted)})
	}
	words := 80 + g.pick(450)
	b.WriteString(trimWords(g.prose(words*6), words))
	if g.edits > 0 {
		fmt.Fprintf(&b, "\n\nI added %d comment(s) where the behaviour is subtle; nothing else changed.", g.edits)
	}
	return b.String(), facts
}
