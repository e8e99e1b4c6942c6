package enginetest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/ctxwin"
)

func TestScriptFile(t *testing.T) {
	sc, err := ParseScript([]byte(`{
		"note": "NOTE: the bug is in parse.go",
		"rules": [{"when": {"last_user_contains": "status"}, "reply": {"content": "all green"}}],
		"replies": [
			{"reasoning": "look first", "tool_calls": [{"name": "read", "arguments": {"path": "main.go"}}]},
			{"tool_calls": [{"name": "grep", "arguments": "{\"pattern\":\"TODO {{n}}\"}"}]},
			{"content": "step {{n}}", "pad": 40}
		],
		"then": "loop",
		"loop_from": 1
	}`))
	if err != nil {
		t.Fatal(err)
	}
	req := func(i int, choice, lastUser string) *Request {
		return &Request{Index: i, ToolChoice: choice, Messages: []ctxwin.Message{{Role: "user", Content: lastUser}}}
	}
	r := sc(req(0, "", "fix it"))
	if r.Reasoning != "look first" || len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "read" || r.ToolCalls[0].Arguments != `{"path":"main.go"}` {
		t.Errorf("reply 0: %+v", r)
	}
	if r := sc(req(1, "none", "what do you know?")); r.Content != "NOTE: the bug is in parse.go" {
		t.Errorf("note request: %+v", r)
	}
	if r := sc(req(2, "", "fix it")); r.ToolCalls[0].Arguments != `{"pattern":"TODO 2"}` {
		t.Errorf("reply 1 at request 2: %+v", r)
	}
	if r := sc(req(3, "", "status?")); r.Content != "all green" {
		t.Errorf("rule: %+v", r)
	}
	r = sc(req(4, "", "fix it"))
	if !strings.HasPrefix(r.Content, "step 4") || len(r.Content) != len("step 4")+40 {
		t.Errorf("reply 2 with pad: %q", r.Content)
	}
	// Looping from replies[1].
	if r := sc(req(5, "", "x")); len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "grep" {
		t.Errorf("loop: %+v", r)
	}
	if r := sc(req(6, "", "x")); !strings.HasPrefix(r.Content, "step 6") {
		t.Errorf("loop: %+v", r)
	}
}

func TestScriptThen(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
	}{
		{`{"replies":[{"content":"a"},{"content":"b"}]}`, []string{"a", "b", "b", "b"}},
		{`{"replies":[{"content":"a"},{"content":"b"}],"then":"loop"}`, []string{"a", "b", "a", "b"}},
		{`{"replies":[{"content":"a"}],"then":"fallback"}`, []string{"a", "Done.", "Done."}},
		{`{"replies":[{"content":"a"}],"then":"fallback","fallback":{"content":"bye"}}`, []string{"a", "bye"}},
		{`{"replies":[]}`, []string{"Done."}},
	} {
		sc, err := ParseScript([]byte(tc.file))
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		for i, w := range tc.want {
			if got := sc(&Request{Index: i}).Content; got != w {
				t.Errorf("%s: reply %d = %q, want %q", tc.file, i, got, w)
			}
		}
	}
}

func TestScriptFileErrors(t *testing.T) {
	for _, bad := range []string{
		`{"replies":[{"contnet":"typo"}]}`,
		`{"replies":[{"content":"a"}],"then":"forever"}`,
		`{"replies":[{"content":"a"}],"then":"loop","loop_from":3}`,
		`{"replies":[{"tool_calls":[{"arguments":{}}]}]}`,
		`{"replies":[{"tool_calls":[{"name":"x","arguments":"not json"}]}]}`,
		`{"replies":[{"tool_calls":[{"name":"x","arguments":[1]}]}]}`,
		`{"replies":[{"pad":-1}]}`,
		`not json`,
	} {
		if _, err := ParseScript([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestScriptFaultsAndFiles(t *testing.T) {
	sc, err := ParseScript([]byte(`{"replies":[{"content":"x","fault":{"status":503,"retry_after":"1","first_byte_delay_ms":5}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	f := sc(&Request{}).Fault
	if f.Status != 503 || f.RetryAfter != "1" || f.FirstByteDelay.Milliseconds() != 5 {
		t.Errorf("fault %+v", f)
	}
	if _, err := LoadScript(t.TempDir() + "/missing.json"); err == nil {
		t.Error("missing file: no error")
	}
}

func TestSequenceAndEcho(t *testing.T) {
	sc := Sequence(Text("a"), Call("read", `{"path":"x"}`))
	if sc(&Request{}).Content != "a" || sc(&Request{}).ToolCalls[0].Name != "read" || sc(&Request{}).ToolCalls[0].Name != "read" {
		t.Error("Sequence")
	}
	if Sequence()(&Request{}).Content != "ok" {
		t.Error("empty Sequence")
	}
	e := Echo()(&Request{Messages: []ctxwin.Message{{Role: "user", Content: "hello"}, {Role: "assistant", Content: "x"}}})
	if e.Content != "hello" {
		t.Errorf("Echo: %q", e.Content)
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`))
	f.Add([]byte(`{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"read","arguments":{"path":"x"}}}]},{"role":"tool","tool_call_id":"a","content":[{"type":"text","text":"r"}]}],"tools":[{"type":"function","function":{"name":"read"}}],"tool_choice":{"type":"function","function":{"name":"read"}},"max_tokens":5}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":5}],"tool_choice":[]}`))
	tk := newTokenizer(3.5)
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := parseRequest(body)
		if err != nil {
			return
		}
		if len(p.Messages) == 0 || len(p.Tools) != len(p.toolJSON) {
			t.Fatalf("parsed %d messages, %d tools, %d tool JSONs", len(p.Messages), len(p.Tools), len(p.toolJSON))
		}
		for _, tj := range p.toolJSON {
			if !json.Valid([]byte(tj)) {
				t.Fatalf("tool JSON %q", tj)
			}
		}
		checkToolPairs(p.Messages)
		tk.Count(renderPrompt(p.toolJSON, p.Messages))
	})
}
