package tools

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/ctxwin"
	"github.com/reika-lsp/reika-lsp/internal/deptest"
)

func TestDeps(t *testing.T) {
	allowed := []string{
		"github.com/reika-lsp/reika-lsp/agent/tools",
		"github.com/reika-lsp/reika-lsp/ctxwin",
		"github.com/reika-lsp/reika-lsp/internal/walk",
		"github.com/reika-lsp/reika-lsp/internal/atomicfile",
		"github.com/reika-lsp/reika-lsp/internal/regular",
		"github.com/reika-lsp/reika-lsp/agent/approval",
	}
	// The libraries of globs, of fetch_url's HTML and of the parameters'
	// schemas, with their packages.
	libraries := []string{
		"github.com/google/jsonschema-go",
		"github.com/bmatcuk/doublestar/v4",
		"github.com/JohannesKaufmann/html-to-markdown/v2",
		"github.com/JohannesKaufmann/dom",
		"golang.org/x/net/html",
	}
	for _, d := range deptest.Deps(t, ".") {
		if !slices.Contains(allowed, d) && !slices.ContainsFunc(libraries, func(l string) bool { return d == l || strings.HasPrefix(d, l+"/") }) {
			t.Errorf("agent/tools depends on %s; it may import only the standard library, ctxwin, agent/approval, internal/walk, internal/atomicfile, internal/regular, doublestar, html-to-markdown, x/net/html and jsonschema-go", d)
		}
	}
}

// The parameters of docs/design.md §4; their names are part of the interface.
var designParams = []struct {
	name     string
	required []string
	optional []string
}{
	{"read", []string{"path"}, []string{"start_line", "end_line"}},
	{"write", []string{"path", "content"}, nil},
	{"edit", []string{"path", "old_string", "new_string"}, []string{"replace_all"}},
	{"bash", []string{"command"}, []string{"timeout_s", "background"}},
	{"grep", []string{"pattern"}, []string{"path", "glob"}},
	{"glob", []string{"pattern"}, []string{"path"}},
	{"fetch_url", []string{"url"}, nil},
	{"subagent", []string{"task"}, nil},
}

func TestSpecs(t *testing.T) {
	all := All()
	if len(all) != len(designParams) {
		t.Fatalf("All() has %d tools, want %d", len(all), len(designParams))
	}
	for i, want := range designParams {
		spec := all[i].Spec()
		if spec.Name != want.name {
			t.Errorf("tool %d is %q, want %q", i, spec.Name, want.name)
			continue
		}
		if len(spec.Description) < 80 || strings.TrimSpace(spec.Description) != spec.Description {
			t.Errorf("%s: description %q is too short or not trimmed", spec.Name, spec.Description)
		}
		var schema struct {
			Type       string `json:"type"`
			Properties map[string]struct {
				Type        string `json:"type"`
				Description string `json:"description"`
			} `json:"properties"`
			Required             []string `json:"required"`
			AdditionalProperties *bool    `json:"additionalProperties"`
		}
		if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
			t.Errorf("%s: parameters are not valid JSON: %v", spec.Name, err)
			continue
		}
		if schema.Type != "object" || schema.AdditionalProperties == nil || *schema.AdditionalProperties {
			t.Errorf("%s: schema must be a closed object: %s", spec.Name, spec.Parameters)
		}
		if !slices.Equal(schema.Required, want.required) {
			t.Errorf("%s: required %v, want %v", spec.Name, schema.Required, want.required)
		}
		var names []string
		for n, p := range schema.Properties {
			names = append(names, n)
			if p.Type == "" || p.Description == "" {
				t.Errorf("%s.%s: missing type or description", spec.Name, n)
			}
		}
		slices.Sort(names)
		wantNames := slices.Sorted(slices.Values(append(slices.Clone(want.required), want.optional...)))
		if !slices.Equal(names, wantNames) {
			t.Errorf("%s: parameters %v, want %v", spec.Name, names, wantNames)
		}
		// The spec is part of the fixed prefix: it must not change.
		again := all[i].Spec()
		if again.Name != spec.Name || again.Description != spec.Description || string(again.Parameters) != string(spec.Parameters) {
			t.Errorf("%s: Spec changes between calls", spec.Name)
		}
	}
	if got := Specs(all); len(got) != len(all) || got[3].Name != "bash" {
		t.Errorf("Specs = %v", got)
	}
}

type panicTool struct{}

func (panicTool) Spec() ctxwin.ToolSpec { return ctxwin.ToolSpec{Name: "boom"} }
func (panicTool) Run(context.Context, *Env, json.RawMessage) (ctxwin.Result, error) {
	panic("kaboom")
}

func TestCall(t *testing.T) {
	env := newEnv(t, workspace(t, nil), &approver{})
	res, err := Call(context.Background(), env, All(), "read_file", json.RawMessage(`{}`))
	if err != nil || !res.IsError {
		t.Fatalf("unknown tool: %+v, %v", res, err)
	}
	wantContains(t, "unknown tool", res.Text, `"read_file"`, "read, write, edit, bash, grep, glob, fetch_url, subagent")

	_, err = Call(context.Background(), env, []Tool{panicTool{}}, "boom", nil)
	if err == nil || !strings.Contains(err.Error(), "kaboom") {
		t.Fatalf("panic: err = %v", err)
	}
}

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		path    string
		start   int
		hasStrt bool
		all     bool
		err     string
	}{
		{name: "plain", raw: `{"path":"a.go","start_line":3}`, path: "a.go", start: 3, hasStrt: true},
		{name: "float integer", raw: `{"path":"a","start_line":3.0}`, path: "a", start: 3, hasStrt: true},
		{name: "string integer", raw: `{"path":"a","start_line":" 7 "}`, path: "a", start: 7, hasStrt: true},
		{name: "null integer", raw: `{"path":"a","start_line":null}`, path: "a"},
		{name: "empty string integer", raw: `{"path":"a","start_line":""}`, path: "a"},
		{name: "double encoded", raw: `"{\"path\":\"b.go\"}"`, path: "b.go"},
		{name: "bool string", raw: `{"path":"a","replace_all":"true"}`, path: "a", all: true},
		{name: "bool", raw: `{"path":"a","replace_all":true}`, path: "a", all: true},
		{name: "extra fields ignored", raw: `{"path":"a","color":"red"}`, path: "a"},
		{name: "number as path", raw: `{"path":12}`, path: "12"},
		{name: "empty", raw: ``, err: `missing required parameter "path"; expected`},
		{name: "null", raw: `null`, err: `missing required parameter "path"`},
		{name: "misspelled", raw: `{"file_path":"a"}`, err: `missing required parameter "path" (got "file_path")`},
		{name: "array", raw: `[1,2]`, err: "invalid arguments (not a JSON object)"},
		{name: "malformed", raw: `{"path": "a"`, err: "invalid arguments (malformed JSON"},
		{name: "object as string", raw: `{"path":{"x":1}}`, err: `parameter "path" must be a string`},
		{name: "fraction", raw: `{"path":"a","start_line":1.5}`, err: `parameter "start_line" must be an integer`},
		{name: "word integer", raw: `{"path":"a","start_line":"ten"}`, err: `parameter "start_line" must be an integer`},
		{name: "huge integer", raw: `{"path":"a","start_line":1e300}`, err: `parameter "start_line" is out of range`},
		{name: "bad bool", raw: `{"path":"a","replace_all":"maybe"}`, err: `parameter "replace_all" must be true or false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := parseArgs(json.RawMessage(tt.raw), `{"path": string}`)
			path := a.str("path", true)
			start, has := a.integer("start_line")
			all := a.boolean("replace_all")
			if tt.err != "" {
				if a.err == nil || !strings.Contains(a.err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", a.err, tt.err)
				}
				return
			}
			if a.err != nil {
				t.Fatalf("err = %v", a.err)
			}
			if path != tt.path || start != tt.start || has != tt.hasStrt || all != tt.all {
				t.Errorf("got path %q start %d (%v) all %v", path, start, has, all)
			}
		})
	}
}

// Every tool reports bad arguments as a result the model can fix.
func TestBadArgumentsAreToolErrors(t *testing.T) {
	env := newEnv(t, workspace(t, nil), &approver{decide: deny})
	for _, tool := range All() {
		name := tool.Spec().Name
		for _, raw := range []string{`{`, `[]`, `{}`, `"x"`, `42`} {
			res, err := tool.Run(context.Background(), env, json.RawMessage(raw))
			if err != nil {
				t.Errorf("%s %s: Go error %v", name, raw, err)
				continue
			}
			if !res.IsError || !strings.HasPrefix(res.Text, "Error: ") || !strings.Contains(res.Text, "expected {") {
				t.Errorf("%s %s: %+v", name, raw, res)
			}
		}
	}
}

func TestDiskFilesWriteKeepsMode(t *testing.T) {
	root := workspace(t, map[string]string{"run.sh": "echo old\n"})
	p := root + "/run.sh"
	if err := chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := (DiskFiles{}).WriteFile(context.Background(), p, []byte("echo new\n")); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p); got != "echo new\n" {
		t.Errorf("content %q", got)
	}
	if m, err := mode(p); err != nil || m != 0o755 {
		t.Errorf("mode %o, %v", m, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := (DiskFiles{}).WriteFile(ctx, p, []byte("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled write: %v", err)
	}
}
