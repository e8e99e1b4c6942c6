package agent

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent/tools"
	"github.com/reika-lsp/reika-lsp/ctxwin"
	"golang.org/x/tools/txtar"
)

var updateToolSpecs = flag.Bool("update-toolspecs", false, "rewrite testdata/toolspecs.txtar")

// TestToolSpecsGolden pins the tool definitions sent to the engine, byte
// for byte: which tools each built-in mode offers, with and without
// skills, in a session and in its subagent, and each tool's name,
// description and parameters exactly as the request carries them. The
// definitions are the start of every request's cached prefix, so any
// change here costs every user a cold prompt; change them on purpose only
// (go test ./agent -run TestToolSpecsGolden -update-toolspecs).
func TestToolSpecsGolden(t *testing.T) {
	got := toolSpecsArchive()
	path := filepath.Join("testdata", "toolspecs.txtar")
	if *updateToolSpecs {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-toolspecs to create it)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	gotFiles, wantFiles := txtarFiles(got), txtarFiles(want)
	for name, w := range wantFiles {
		if g, ok := gotFiles[name]; !ok {
			t.Errorf("%s: gone", name)
		} else if !bytes.Equal(g, w) {
			i := 0
			for i < len(g) && i < len(w) && g[i] == w[i] {
				i++
			}
			t.Errorf("%s changed at byte %d:\n got …%q\nwant …%q", name, i, g[i:min(i+80, len(g))], w[i:min(i+80, len(w))])
		}
	}
	for name := range gotFiles {
		if _, ok := wantFiles[name]; !ok {
			t.Errorf("%s: new", name)
		}
	}
	t.Error("the tool definitions differ from testdata/toolspecs.txtar")
}

// toolSpecsArchive is the golden's content: a file per configuration
// listing its tools in the order sent, then a file per tool holding its
// definition.
func toolSpecsArchive() []byte {
	ar := &txtar.Archive{Comment: []byte("The tool definitions sent to the engine (TestToolSpecsGolden).\n")}
	specs := map[string]ctxwin.ToolSpec{}
	var order []string
	for _, mode := range builtinModes {
		for _, withSkills := range []bool{false, true} {
			var skills skillSet
			name := mode.Name
			if withSkills {
				skills = skillSet{skills: []Skill{{Name: "golden", Description: "a skill", Path: "SKILL.md", Shown: "SKILL.md"}}}
				name += "+skills"
			}
			ts := sessionTools(builtinTools(), skills, mode)
			for _, cfg := range []struct {
				name string
				ts   []tools.Tool
			}{{name, ts}, {name + "/subagent", subagentTools(ts)}} {
				var list strings.Builder
				for _, s := range tools.Specs(cfg.ts) {
					fmt.Fprintln(&list, s.Name)
					if _, ok := specs[s.Name]; !ok {
						order = append(order, s.Name)
					}
					specs[s.Name] = s
				}
				ar.Files = append(ar.Files, txtar.File{Name: "config/" + cfg.name, Data: []byte(list.String())})
			}
		}
	}
	for _, name := range order {
		s := specs[name]
		data := fmt.Sprintf("name: %s\ndescription:\n%s\nparameters:\n%s\n", s.Name, s.Description, s.Parameters)
		ar.Files = append(ar.Files, txtar.File{Name: "tool/" + name, Data: []byte(data)})
	}
	return txtar.Format(ar)
}

func txtarFiles(data []byte) map[string][]byte {
	out := map[string][]byte{}
	for _, f := range txtar.Parse(data).Files {
		out[f.Name] = f.Data
	}
	return out
}
