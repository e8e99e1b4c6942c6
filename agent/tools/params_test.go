package tools

import (
	"strings"
	"testing"
)

// TestParamsUsage pins the usage texts the declarations give, as the
// errors show them to the model (the schemas are pinned by
// agent/testdata/toolspecs.txtar).
func TestParamsUsage(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{readDecl.Usage(), `{"path": string, "start_line"?: integer, "end_line"?: integer}`},
		{writeDecl.Usage(), `{"path": string, "content": string}`},
		{editDecl.Usage(), `{"path": string, "old_string": string, "new_string": string, "replace_all"?: boolean}`},
		{bashDecl.Usage(), `{"command": string, "timeout_s"?: integer, "background"?: boolean}`},
		{grepDecl.Usage(), `{"pattern": string, "path"?: string, "glob"?: string}`},
		{globDecl.Usage(), `{"pattern": string, "path"?: string}`},
		{fetchDecl.Usage(), `{"url": string}`},
		{subagentDecl.Usage(), `{"task": string}`},
	} {
		if c.got != c.want {
			t.Errorf("usage %s, want %s", c.got, c.want)
		}
	}
}

func TestParamsDecode(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want bashParams
		err  string
	}{
		{`{"command":"ls"}`, bashParams{Command: "ls"}, ""},
		{`{"command":"ls","timeout_s":0,"background":true}`, bashParams{Command: "ls", Timeout: OptionalInt{N: 0, Set: true}, Background: true}, ""},
		{`"{\"command\":\"ls\",\"timeout_s\":\"12\"}"`, bashParams{Command: "ls", Timeout: OptionalInt{N: 12, Set: true}}, ""},
		{`{"command":"ls","timeout_s":null,"background":"yes"}`, bashParams{Command: "ls", Background: true}, ""},
		{`{"cmd":"ls"}`, bashParams{}, `missing required parameter "command" (got "cmd"); expected {"command": string, "timeout_s"?: integer, "background"?: boolean}`},
		{`{"command":"ls","timeout_s":1.5}`, bashParams{}, `parameter "timeout_s" must be an integer, not 1.5; expected {"command"`},
		{`{"command":["ls"]}`, bashParams{}, `parameter "command" must be a string; expected`},
		{`[1]`, bashParams{}, `invalid arguments (not a JSON object); expected {"command"`},
	} {
		got, err := bashDecl.Decode([]byte(c.raw))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.raw, err)
		case c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %s…", c.raw, err, c.err)
		case c.err == "" && got != c.want:
			t.Errorf("%s: %+v, want %+v", c.raw, got, c.want)
		}
	}
}

// TestDeclareRefuses checks that a declaration the decoder cannot read
// fails at once rather than at the model's first call.
func TestDeclareRefuses(t *testing.T) {
	for name, declare := range map[string]func(){
		"no json name": func() { Declare[struct{ Path string }]() },
		"required bool": func() {
			Declare[struct {
				B bool `json:"b"`
			}]()
		},
		"plain int": func() {
			Declare[struct {
				N int `json:"n,omitempty"`
			}]()
		},
		"required OptInt": func() {
			Declare[struct {
				N OptionalInt `json:"n"`
			}]()
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: declared", name)
				}
			}()
			declare()
		}()
	}
}
