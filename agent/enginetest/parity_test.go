package enginetest

// The fake against the real thing: one table of checks on the wire, run
// against the fake (its llama.cpp shape) and against a real llama-server
// (Debian's llama.cpp-tools, see internal/llamaserver) serving the
// hand-wired tool caller of internal/gguf. Both are driven by the same
// requests: the fake's script below answers the tool caller's signals as
// the model does. A row that fails on one side only is a difference between
// the fake and the server; the server is right.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/ctxwin"
	"github.com/reika-lsp/reika-lsp/internal/gguf"
	"github.com/reika-lsp/reika-lsp/internal/llamaserver"
)

// parityWindow is -c of the real server and the fake's window (one slot).
const parityWindow = 4096

// The tool caller's wiring, shared by both sides.
var (
	parityDefault = "Nothing to do."
	paritySplit   = []string{"<tool_call>\n{\"name\": \"read\", ", "\"arguments\": {\"path\": ", "\"c.txt\"}}\n</tool_call>"}
	parityCaller  = gguf.ToolCaller{
		Default: []string{parityDefault},
		Actions: []gguf.Action{
			{Signal: "[[call]]", Pieces: []string{gguf.CallText("read", `{"path": "a.txt"}`)}},
			{Signal: "[[split]]", Pieces: paritySplit},
			{Signal: "[[junk]]", Pieces: []string{"<tool_call>\nnot json at all\n</tool_call>"}},
		},
	}
)

// callRe reads a Hermes-style call as the tool caller writes it.
var callRe = regexp.MustCompile(`(?s)<tool_call>\n\{"name": "([^"]+)", "arguments": (.*)\}\n</tool_call>`)

// signalScript answers as the tool caller does: the action of the newest
// signal in the request, else the default reply; "[[junk]]" is a call the
// server's grammar rejects, a parser error here.
func signalScript(r *Request) Reply {
	best, at := "", -1
	for _, m := range r.Messages {
		for _, a := range parityCaller.Actions {
			if i := strings.LastIndex(m.Content, a.Signal); i >= 0 {
				best, at = a.Signal, 0
			}
		}
	}
	if at < 0 {
		return Text(parityDefault)
	}
	for _, a := range parityCaller.Actions {
		if a.Signal != best {
			continue
		}
		text := strings.Join(a.Pieces, "")
		if best == "[[junk]]" {
			return Reply{Content: text, Fault: Fault{ParserError: true}}
		}
		if m := callRe.FindStringSubmatch(text); m != nil && (len(r.Tools) > 0 && r.ToolChoice != "none") {
			return Reply{ToolCalls: []ctxwin.ToolCall{{Name: m[1], Arguments: m[2]}}}
		}
		return Text(text)
	}
	return Text(parityDefault)
}

// instance is one running engine of a side.
type instance struct {
	root    string
	restart func()
	release func() // ends a held load
}

// setup is what an instance is started with.
type setup struct {
	key     string // --api-key
	loading bool   // it starts loading its model
	slots   int    // -np (0: 1); each slot gets parityWindow tokens; -1: no -np (the server's default slots, sharing parityWindow)
}

type side struct {
	name  string
	start func(t *testing.T, su setup) *instance
}

func sides(t *testing.T) []side {
	fake := side{name: "fake", start: func(t *testing.T, su setup) *instance {
		o := Options{Window: parityWindow, APIKey: su.key, Loading: su.loading, Slots: su.slots, Script: signalScript}
		if su.slots < 0 {
			o.Slots, o.KVUnified = DefaultSlots, true
		}
		s := New(o)
		t.Cleanup(s.Close)
		return &instance{root: s.RootURL(), restart: s.Restart, release: func() { s.SetLoading(false) }}
	}}
	out := []side{fake}
	real := side{name: "llama-server", start: func(t *testing.T, su setup) *instance {
		tree := llamaserver.Find(t)
		np := max(su.slots, 1)
		ctx := parityWindow * np
		if su.slots < 0 {
			np, ctx = 0, parityWindow
		}
		srv := llamaserver.Start(t, tree, llamaserver.Config{Model: llamaserver.ToolCallerModel(t, parityCaller), Ctx: ctx, Parallel: np,
			APIKey: su.key, HoldLoad: su.loading, Alias: DefaultModel, Args: llamaserver.ToolCallerArgs})
		return &instance{root: srv.RootURL(), restart: srv.Restart, release: srv.Release}
	}}
	return append(out, real)
}

// exchange is one HTTP request and its answer.
type exchange struct {
	status int
	body   []byte
	header http.Header
}

func (e exchange) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(e.body, &m); err != nil {
		t.Fatalf("not a JSON object (%v): %s", err, e.body)
	}
	return m
}

// events splits a streamed body into its data payloads.
func (e exchange) events() []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(e.body))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, p)
		}
	}
	return out
}

func call(t *testing.T, c *http.Client, method, url, key string, body any) exchange {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return exchange{status: resp.StatusCode, body: b, header: resp.Header}
}

var parityTools = []any{map[string]any{"type": "function", "function": map[string]any{
	"name": "read", "description": "Read a file.",
	"parameters": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []string{"path"}},
}}}

// chat is a chat request body: a system message, the user's text, the read
// tool, and more fields.
func chat(user string, more ...any) map[string]any {
	b := map[string]any{"model": DefaultModel, "tools": parityTools, "messages": []any{
		map[string]any{"role": "system", "content": "You are a coding agent."},
		map[string]any{"role": "user", "content": user},
	}}
	for i := 0; i+1 < len(more); i += 2 {
		b[more[i].(string)] = more[i+1]
	}
	return b
}

func keys(m any) []string {
	o, _ := m.(map[string]any)
	var out []string
	for k := range o {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func n(v any) int { f, _ := v.(float64); return int(f) }

// row is one check, run on an instance of each side.
type row struct {
	name    string
	key     string // the instance's --api-key
	loading bool   // the instance starts loading its model
	own     bool   // the row needs an instance of its own (it restarts it)
	slots   int    // the instance's slots (0: the shared one-slot instance; -1: the server's default)
	check   func(t *testing.T, c *http.Client, in *instance)
}

var parityRows = []row{
	{name: "health", check: func(t *testing.T, c *http.Client, in *instance) {
		for _, p := range []string{"/health", "/v1/health"} {
			if e := call(t, c, "GET", in.root+p, "", nil); e.status != 200 || fmt.Sprint(e.json(t)) != "map[status:ok]" {
				t.Errorf("GET %s: %d %s", p, e.status, e.body)
			}
		}
	}},
	{name: "models listing: meta.n_ctx is the slot's window", check: func(t *testing.T, c *http.Client, in *instance) {
		for _, p := range []string{"/v1/models", "/models"} {
			e := call(t, c, "GET", in.root+p, "", nil)
			m := e.json(t)
			data, _ := m["data"].([]any)
			if e.status != 200 || len(data) != 1 || m["object"] != "list" || m["models"] == nil {
				t.Fatalf("GET %s: %d %s", p, e.status, e.body)
			}
			d := data[0].(map[string]any)
			meta := d["meta"].(map[string]any)
			if d["id"] != DefaultModel || d["owned_by"] != "llamacpp" || n(meta["n_ctx"]) != parityWindow || n(meta["n_ctx_train"]) < parityWindow {
				t.Errorf("GET %s: entry %v", p, d)
			}
			for _, k := range []string{"vocab_type", "n_vocab", "n_ctx", "n_ctx_train", "n_embd", "n_params", "size", "ftype"} {
				if _, ok := meta[k]; !ok {
					t.Errorf("meta has no %s: %v", k, keys(meta))
				}
			}
		}
	}},
	{name: "props: default_generation_settings has only params and n_ctx", check: func(t *testing.T, c *http.Client, in *instance) {
		e := call(t, c, "GET", in.root+"/props", "", nil)
		m := e.json(t)
		dgs := m["default_generation_settings"]
		if got := keys(dgs); e.status != 200 || !slices.Equal(got, []string{"n_ctx", "params"}) {
			t.Errorf("default_generation_settings keys %v (%d)", got, e.status)
		}
		if n(dgs.(map[string]any)["n_ctx"]) != parityWindow || n(m["total_slots"]) != 1 || m["build_info"] == nil || m["chat_template"] == nil {
			t.Errorf("props: n_ctx %v, total_slots %v, build_info %v", dgs.(map[string]any)["n_ctx"], m["total_slots"], m["build_info"])
		}
	}},
	{name: "no /v1/props; /metrics needs --metrics", check: func(t *testing.T, c *http.Client, in *instance) {
		e := call(t, c, "GET", in.root+"/v1/props", "", nil)
		if e.status != 404 || e.json(t)["error"].(map[string]any)["type"] != "not_found_error" {
			t.Errorf("GET /v1/props: %d %s", e.status, e.body)
		}
		e = call(t, c, "GET", in.root+"/metrics", "", nil)
		if e.status != 501 || e.json(t)["error"].(map[string]any)["type"] != "not_supported_error" {
			t.Errorf("GET /metrics: %d %s", e.status, e.body)
		}
	}},
	{name: "slots: one per slot with its window", check: func(t *testing.T, c *http.Client, in *instance) {
		e := call(t, c, "GET", in.root+"/slots", "", nil)
		var slots []map[string]any
		if err := json.Unmarshal(e.body, &slots); err != nil || e.status != 200 || len(slots) != 1 {
			t.Fatalf("GET /slots: %d %s", e.status, e.body)
		}
		s := slots[0]
		if n(s["id"]) != 0 || n(s["n_ctx"]) != parityWindow || s["is_processing"] != false || s["speculative"] != false {
			t.Errorf("slot %v", s)
		}
	}},
	{name: "api key: only /health is public", key: "sk-parity", check: func(t *testing.T, c *http.Client, in *instance) {
		if e := call(t, c, "GET", in.root+"/health", "", nil); e.status != 200 {
			t.Errorf("GET /health: %d", e.status)
		}
		for _, p := range []string{"/v1/models", "/models", "/props", "/slots", "/v1/chat/completions"} {
			method, body := "GET", any(nil)
			if strings.HasSuffix(p, "completions") {
				method, body = "POST", chat("hello")
			}
			e := call(t, c, method, in.root+p, "", body)
			if er, _ := e.json(t)["error"].(map[string]any); e.status != 401 || er["type"] != "authentication_error" || er["message"] != "Invalid API Key" {
				t.Errorf("%s %s without the key: %d %s", method, p, e.status, e.body)
			}
			if e := call(t, c, method, in.root+p, "sk-parity", body); e.status != 200 {
				t.Errorf("%s %s with the key: %d %s", method, p, e.status, e.body)
			}
		}
	}},
	{name: "loading: every route answers 503 Loading model", loading: true, check: func(t *testing.T, c *http.Client, in *instance) {
		for _, p := range []string{"/health", "/v1/models", "/props", "/slots", "/v1/chat/completions"} {
			method, body := "GET", any(nil)
			if strings.HasSuffix(p, "completions") {
				method, body = "POST", chat("hello")
			}
			e := call(t, c, method, in.root+p, "", body)
			er, _ := e.json(t)["error"].(map[string]any)
			if e.status != 503 || er["message"] != "Loading model" || er["type"] != "unavailable_error" || n(er["code"]) != 503 {
				t.Errorf("%s %s while loading: %d %s", method, p, e.status, e.body)
			}
		}
		in.release()
		if e := call(t, c, "GET", in.root+"/v1/models", "", nil); e.status != 200 {
			t.Errorf("after loading: %d %s", e.status, e.body)
		}
	}},
	{name: "chat: a text reply with usage and timings", check: func(t *testing.T, c *http.Client, in *instance) {
		e := call(t, c, "POST", in.root+"/v1/chat/completions", "", chat("hello"))
		m := e.json(t)
		ch := m["choices"].([]any)[0].(map[string]any)
		msg := ch["message"].(map[string]any)
		if e.status != 200 || ch["finish_reason"] != "stop" || msg["role"] != "assistant" || msg["content"] != parityDefault {
			t.Fatalf("%d %s", e.status, e.body)
		}
		u := m["usage"].(map[string]any)
		tm := m["timings"].(map[string]any)
		if got := keys(u); !slices.Equal(got, []string{"completion_tokens", "prompt_tokens", "prompt_tokens_details", "total_tokens"}) {
			t.Errorf("usage keys %v", got)
		}
		for _, k := range []string{"cache_n", "prompt_n", "prompt_ms", "prompt_per_token_ms", "prompt_per_second", "predicted_n", "predicted_ms", "predicted_per_token_ms", "predicted_per_second"} {
			if _, ok := tm[k]; !ok {
				t.Errorf("timings has no %s", k)
			}
		}
		if n(u["prompt_tokens"]) != n(tm["cache_n"])+n(tm["prompt_n"]) || n(u["prompt_tokens_details"].(map[string]any)["cached_tokens"]) != n(tm["cache_n"]) ||
			n(u["completion_tokens"]) != n(tm["predicted_n"]) || n(u["total_tokens"]) != n(u["prompt_tokens"])+n(u["completion_tokens"]) {
			t.Errorf("usage %v, timings %v", u, tm)
		}
	}},
	{name: "stream: role chunk, deltas, finish chunk, usage chunk with timings, [DONE]", check: func(t *testing.T, c *http.Client, in *instance) {
		e := call(t, c, "POST", in.root+"/v1/chat/completions", "", chat("hello", "stream", true, "stream_options", map[string]any{"include_usage": true}))
		ev := e.events()
		if e.status != 200 || len(ev) < 4 || ev[len(ev)-1] != "[DONE]" {
			t.Fatalf("%d %q", e.status, ev)
		}
		var first, fin, usage map[string]any
		json.Unmarshal([]byte(ev[0]), &first)
		json.Unmarshal([]byte(ev[len(ev)-3]), &fin)
		json.Unmarshal([]byte(ev[len(ev)-2]), &usage)
		if d := first["choices"].([]any)[0].(map[string]any)["delta"]; fmt.Sprint(d) != "map[content:<nil> role:assistant]" {
			t.Errorf("first delta %v", d)
		}
		fc := fin["choices"].([]any)[0].(map[string]any)
		if fc["finish_reason"] != "stop" || len(fc["delta"].(map[string]any)) != 0 {
			t.Errorf("finish chunk %s", ev[len(ev)-3])
		}
		if len(usage["choices"].([]any)) != 0 || usage["usage"] == nil || usage["timings"] == nil {
			t.Errorf("usage chunk %s", ev[len(ev)-2])
		}
		var text strings.Builder
		for _, p := range ev[1 : len(ev)-3] {
			var ch map[string]any
			json.Unmarshal([]byte(p), &ch)
			text.WriteString(fmt.Sprint(ch["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)["content"]))
		}
		if text.String() != parityDefault {
			t.Errorf("streamed text %q", text.String())
		}
	}},
	{name: "tool call: content is \"\" beside the calls", check: func(t *testing.T, c *http.Client, in *instance) {
		e := call(t, c, "POST", in.root+"/v1/chat/completions", "", chat("read it [[call]]"))
		ch := e.json(t)["choices"].([]any)[0].(map[string]any)
		msg := ch["message"].(map[string]any)
		calls, _ := msg["tool_calls"].([]any)
		if e.status != 200 || ch["finish_reason"] != "tool_calls" || len(calls) != 1 {
			t.Fatalf("%d %s", e.status, e.body)
		}
		if c, ok := msg["content"]; !ok || c != "" {
			t.Errorf("content %#v beside tool calls, want \"\"", c)
		}
		tc := calls[0].(map[string]any)
		f := tc["function"].(map[string]any)
		if tc["type"] != "function" || tc["id"] == "" || f["name"] != "read" || f["arguments"] != `{"path": "a.txt"}` {
			t.Errorf("call %v", tc)
		}
	}},
	{name: "tool call streamed: the first delta carries id, name and arguments", check: func(t *testing.T, c *http.Client, in *instance) {
		e := call(t, c, "POST", in.root+"/v1/chat/completions", "", chat("read it [[split]]", "stream", true))
		var firstCall map[string]any
		args, finish := "", ""
		for _, p := range e.events() {
			var ch map[string]any
			if json.Unmarshal([]byte(p), &ch) != nil || len(ch["choices"].([]any)) == 0 {
				continue
			}
			c0 := ch["choices"].([]any)[0].(map[string]any)
			if f, _ := c0["finish_reason"].(string); f != "" {
				finish = f
			}
			tcs, _ := c0["delta"].(map[string]any)["tool_calls"].([]any)
			for _, x := range tcs {
				tc := x.(map[string]any)
				if firstCall == nil {
					firstCall = tc
				}
				args += tc["function"].(map[string]any)["arguments"].(string)
			}
		}
		if firstCall == nil || finish != "tool_calls" {
			t.Fatalf("no call streamed (finish %q): %s", finish, e.body)
		}
		f := firstCall["function"].(map[string]any)
		if firstCall["id"] == nil || firstCall["type"] != "function" || f["name"] != "read" || f["arguments"] == "" || n(firstCall["index"]) != 0 {
			t.Errorf("first call delta %v", firstCall)
		}
		var a map[string]any
		if json.Unmarshal([]byte(args), &a) != nil || a["path"] != "c.txt" {
			t.Errorf("arguments %q", args)
		}
	}},
	{name: "length cut keeps the calls, the last cut short", check: func(t *testing.T, c *http.Client, in *instance) {
		// Each side counts the reply in its own tokens: cut it at every
		// length and look for a cut inside the arguments.
		whole := call(t, c, "POST", in.root+"/v1/chat/completions", "", chat("read it [[split]]")).json(t)
		used := n(whole["usage"].(map[string]any)["completion_tokens"])
		cut := ""
		for k := used - 1; k >= 1 && cut == ""; k-- {
			e := call(t, c, "POST", in.root+"/v1/chat/completions", "", chat("read it [[split]]", "max_tokens", k))
			ch := e.json(t)["choices"].([]any)[0].(map[string]any)
			if e.status != 200 || ch["finish_reason"] != "length" {
				t.Fatalf("max_tokens %d of %d: %d %s", k, used, e.status, e.body)
			}
			calls, _ := ch["message"].(map[string]any)["tool_calls"].([]any)
			if len(calls) == 1 {
				if args := calls[0].(map[string]any)["function"].(map[string]any)["arguments"].(string); !json.Valid([]byte(args)) {
					cut = args
				}
			}
		}
		if cut == "" || !strings.HasPrefix(`{"path": "c.txt"}`, cut) && !strings.HasPrefix(`{"path":"c.txt"}`, cut) {
			t.Errorf("no reply cut inside the call's arguments kept the call (last cut %q)", cut)
		}
	}},
	{name: "max_tokens beyond the room is no error", check: func(t *testing.T, c *http.Client, in *instance) {
		e := call(t, c, "POST", in.root+"/v1/chat/completions", "", chat("hello", "max_tokens", 100000))
		if e.status != 200 {
			t.Errorf("%d %s", e.status, e.body)
		}
	}},
	{name: "overflow: 400 exceed_context_size_error, streamed or not", check: func(t *testing.T, c *http.Client, in *instance) {
		long := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 1200)
		for _, stream := range []bool{false, true} {
			e := call(t, c, "POST", in.root+"/v1/chat/completions", "", chat(long, "stream", stream))
			er, _ := e.json(t)["error"].(map[string]any)
			msg, _ := er["message"].(string)
			if e.status != 400 || er["type"] != "exceed_context_size_error" || n(er["code"]) != 400 || n(er["n_ctx"]) != parityWindow || n(er["n_prompt_tokens"]) <= parityWindow {
				t.Errorf("stream %v: %d %s", stream, e.status, e.body)
			}
			if want := fmt.Sprintf("request (%d tokens) exceeds the available context size (%d tokens), try increasing it", n(er["n_prompt_tokens"]), parityWindow); msg != want {
				t.Errorf("message %q", msg)
			}
		}
	}},
	{name: "the chat parser's 500: streamed as the only data line, no [DONE]", check: func(t *testing.T, c *http.Client, in *instance) {
		e := call(t, c, "POST", in.root+"/v1/chat/completions", "", chat("go [[junk]]"))
		er, _ := e.json(t)["error"].(map[string]any)
		if e.status != 500 || er["type"] != "server_error" || n(er["code"]) != 500 || er["message"] == "" {
			t.Errorf("%d %s", e.status, e.body)
		}
		e = call(t, c, "POST", in.root+"/v1/chat/completions", "", chat("go [[junk]]", "stream", true))
		ev := e.events()
		if e.status != 200 || len(ev) != 1 || !strings.HasPrefix(ev[0], `{"error":{"code":500,`) {
			t.Errorf("streamed: %d %q", e.status, ev)
		}
	}},
	{name: "prefix cache: the same prompt again reuses all but one token", check: func(t *testing.T, c *http.Client, in *instance) {
		body := chat("say something")
		call(t, c, "POST", in.root+"/v1/chat/completions", "", body)
		m := call(t, c, "POST", in.root+"/v1/chat/completions", "", body).json(t)
		if cn, pt := n(m["timings"].(map[string]any)["cache_n"]), n(m["usage"].(map[string]any)["prompt_tokens"]); cn != pt-1 {
			t.Errorf("cache_n %d of %d", cn, pt)
		}
	}},
	{name: "the slot keeps the prompt and every generated token but the last", check: func(t *testing.T, c *http.Client, in *instance) {
		first := call(t, c, "POST", in.root+"/v1/chat/completions", "", chat("say something")).json(t)
		u := first["usage"].(map[string]any)
		reply := first["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string)
		next := chat("say something")
		next["messages"] = append(next["messages"].([]any), map[string]any{"role": "assistant", "content": reply}, map[string]any{"role": "user", "content": "and?"})
		m := call(t, c, "POST", in.root+"/v1/chat/completions", "", next).json(t)
		if cn, want := n(m["timings"].(map[string]any)["cache_n"]), n(u["prompt_tokens"])+n(u["completion_tokens"])-1; cn != want {
			t.Errorf("cache_n %d after the reply, want the prompt %d and the reply's %d tokens but the end of turn: %d", cn, n(u["prompt_tokens"]), n(u["completion_tokens"]), want)
		}
	}},
	{name: "host-memory cache: a prompt that comes back is restored", check: func(t *testing.T, c *http.Client, in *instance) {
		a := chat("say something about the first topic at some length")
		b := chat("say something")
		b["messages"].([]any)[0] = map[string]any{"role": "system", "content": "A completely different system message for this one."}
		call(t, c, "POST", in.root+"/v1/chat/completions", "", a)
		call(t, c, "POST", in.root+"/v1/chat/completions", "", b)
		m := call(t, c, "POST", in.root+"/v1/chat/completions", "", a).json(t)
		if cn, pt := n(m["timings"].(map[string]any)["cache_n"]), n(m["usage"].(map[string]any)["prompt_tokens"]); cn != pt-1 {
			t.Errorf("cache_n %d of %d after a detour", cn, pt)
		}
	}},
	{name: "restart: nothing is cached", own: true, check: func(t *testing.T, c *http.Client, in *instance) {
		body := chat("say something")
		call(t, c, "POST", in.root+"/v1/chat/completions", "", body)
		in.restart()
		m := call(t, c, "POST", in.root+"/v1/chat/completions", "", body).json(t)
		if cn := n(m["timings"].(map[string]any)["cache_n"]); cn != 0 {
			t.Errorf("cache_n %d after a restart", cn)
		}
	}},
	{name: "apply-template: the prompt with the generation prompt", check: func(t *testing.T, c *http.Client, in *instance) {
		e := call(t, c, "POST", in.root+"/apply-template", "", map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}})
		m := e.json(t)
		p, _ := m["prompt"].(string)
		if e.status != 200 || len(m) != 1 || !strings.Contains(p, "hi") || !strings.HasSuffix(p, "<|im_start|>assistant\n") {
			t.Errorf("%d %s", e.status, e.body)
		}
	}},
	{name: "tokenize: tokens, or ids with pieces", check: func(t *testing.T, c *http.Client, in *instance) {
		e := call(t, c, "POST", in.root+"/tokenize", "", map[string]any{"content": "hello world"})
		if e.status == 404 {
			t.Skip("no POST /tokenize in the fake yet (issue 12 adds it)")
		}
		var plain struct {
			Tokens []int `json:"tokens"`
		}
		if err := json.Unmarshal(e.body, &plain); e.status != 200 || err != nil || len(plain.Tokens) == 0 {
			t.Errorf("%d %s", e.status, e.body)
		}
		e = call(t, c, "POST", in.root+"/tokenize", "", map[string]any{"content": "hello", "with_pieces": true})
		var pieces struct {
			Tokens []struct {
				ID    *int    `json:"id"`
				Piece *string `json:"piece"`
			} `json:"tokens"`
		}
		if err := json.Unmarshal(e.body, &pieces); err != nil || len(pieces.Tokens) == 0 || pieces.Tokens[0].ID == nil || pieces.Tokens[0].Piece == nil {
			t.Errorf("with_pieces: %d %s", e.status, e.body)
		}
	}},
}

func TestParityWithLlamaServer(t *testing.T) {
	// A fresh connection per request: llama-server closes the connection
	// after some errors, and a POST is not retried on a closed one.
	tr := &http.Transport{DisableKeepAlives: true}
	t.Cleanup(tr.CloseIdleConnections)
	c := &http.Client{Transport: tr}
	for _, sd := range sides(t) {
		t.Run(sd.name, func(t *testing.T) {
			shared := sd.start(t, setup{}) // for the rows that need nothing of their own
			for _, r := range slices.Concat(parityRows, cacheRows, slotRows) {
				t.Run(r.name, func(t *testing.T) {
					in := shared
					if r.key != "" || r.loading || r.own || r.slots != 0 {
						in = sd.start(t, setup{key: r.key, loading: r.loading, slots: r.slots})
					}
					r.check(t, c, in)
				})
			}
		})
	}
}
