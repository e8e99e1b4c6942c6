package lsp

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/lsp/lsptest"
)

func TestInitializeAdvertisesCapabilities(t *testing.T) {
	h := start(t, harnessOptions{})
	raw := h.initialize(nil, nil)
	type initResult struct {
		Capabilities struct {
			PositionEncoding string `json:"positionEncoding"`
			TextDocumentSync struct {
				OpenClose bool `json:"openClose"`
				Change    int  `json:"change"`
			} `json:"textDocumentSync"`
			ExecuteCommandProvider struct {
				Commands []string `json:"commands"`
			} `json:"executeCommandProvider"`
			CodeActionProvider struct {
				CodeActionKinds []string `json:"codeActionKinds"`
			} `json:"codeActionProvider"`
			Workspace struct {
				WorkspaceFolders struct {
					Supported bool `json:"supported"`
				} `json:"workspaceFolders"`
			} `json:"workspace"`
		} `json:"capabilities"`
		ServerInfo struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"serverInfo"`
	}
	res := decode[initResult](t, raw)
	c := res.Capabilities
	if c.PositionEncoding != "utf-16" || !c.TextDocumentSync.OpenClose || c.TextDocumentSync.Change != 2 {
		t.Errorf("text sync = %+v, encoding %q; want openClose, incremental (2), utf-16", c.TextDocumentSync, c.PositionEncoding)
	}
	want := []string{"reika.ask", "reika.compact", "reika.cancel", "reika.status", "reika.save", "reika.newSession", "reika.transcript", "reika.commands", "reika.sessions"}
	if !slices.Equal(c.ExecuteCommandProvider.Commands, want) {
		t.Errorf("commands = %v, want %v", c.ExecuteCommandProvider.Commands, want)
	}
	if !slices.Equal(c.CodeActionProvider.CodeActionKinds, []string{"source.compactContext"}) {
		t.Errorf("code action kinds = %v", c.CodeActionProvider.CodeActionKinds)
	}
	if !c.Workspace.WorkspaceFolders.Supported {
		t.Error("workspace.workspaceFolders.supported is not true")
	}
	if res.ServerInfo.Name != "reika-lsp" || res.ServerInfo.Version != "test" {
		t.Errorf("serverInfo = %+v", res.ServerInfo)
	}
	// Nothing the server does not provide is advertised, not even as false
	// or 0 (encoding/json/v2 writes those unless omitzero).
	for _, key := range []string{"hoverProvider", "completionProvider", "false", ":0"} {
		if strings.Contains(string(raw), key) {
			t.Errorf("initialize result contains %q: %s", key, raw)
		}
	}
}

// Every advertised command runs, and nothing else does.
func TestCommandTableRunsTheAdvertisedCommands(t *testing.T) {
	var names []string
	for name := range commandTable {
		names = append(names, name)
	}
	slices.Sort(names)
	want := slices.Sorted(slices.Values(Commands))
	if !slices.Equal(names, want) {
		t.Errorf("commandTable runs %v; Commands advertises %v", names, want)
	}
}

func TestRequestBeforeInitializeIsRefused(t *testing.T) {
	h := start(t, harnessOptions{})
	err := h.command(CmdStatus, nil, nil)
	if rpcCode(err) != int(jsonrpc2.ServerNotInitialized) {
		t.Fatalf("reika.status before initialize: %v, want ServerNotInitialized (-32002)", err)
	}
	// A notification before initialize is dropped, not applied.
	path := h.root + "/a.go"
	h.c.Notify(h.ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": "file://" + path, "languageId": "go", "version": 1, "text": "early"}})
	f := h.initialized()
	if _, err := f.Opts.Workspace.ReadFile(path); err == nil {
		t.Error("a didOpen sent before initialize was applied")
	}
	var st agent.Status
	h.mustCommand(CmdStatus, nil, &st)
	if st.Session != "s1" {
		t.Errorf("status after initialize = %+v", st)
	}
	// A second initialize is an error.
	if err := h.c.Call(h.ctx, "initialize", map[string]any{}, nil); rpcCode(err) != int(jsonrpc2.InvalidRequest) {
		t.Errorf("second initialize: %v, want InvalidRequest", err)
	}
}

func TestUnknownMethods(t *testing.T) {
	h := start(t, harnessOptions{})
	h.initialized()
	err := h.c.Call(h.ctx, "textDocument/hover", map[string]any{}, nil)
	if rpcCode(err) != int(jsonrpc2.MethodNotFound) {
		t.Errorf("hover: %v, want MethodNotFound", err)
	}
	err = h.command("reika.nope", nil, nil)
	if rpcCode(err) != int(jsonrpc2.InvalidParams) || !strings.Contains(err.Error(), "reika.ask") {
		t.Errorf("unknown command: %v, want InvalidParams naming the known commands", err)
	}
}

func TestStatusAfterInitialized(t *testing.T) {
	h := start(t, harnessOptions{})
	f := h.initialized()
	m := h.waitNote(MethodStatus, func(m lsptest.Message) bool { return strings.Contains(string(m.Params), `"model":"fake"`) })
	st := decode[agent.Status](t, m.Params)
	if st != f.Status() && st.Text != f.Status().Text {
		t.Errorf("status notification = %+v, want the agent's %+v", st, f.Status())
	}
	var got agent.Status
	h.mustCommand(CmdStatus, []any{}, &got)
	if got.Text != f.Status().Text || got.Level != agent.LevelOK || *got.Window != 24000 {
		t.Errorf("reika.status = %+v", got)
	}
	// The first status notification comes after initialized and says the
	// server is starting; none comes before initialize's answer.
	first := decode[agent.Status](t, h.c.Notes(MethodStatus)[0].Params)
	if first.Text != "ctx –" || first.Window != nil {
		t.Errorf("first status = %+v, want the placeholder", first)
	}
}

func TestAskStreamsTranscriptProgressAndStatus(t *testing.T) {
	h := start(t, harnessOptions{})
	f := h.initialized()
	var res agent.AskResult
	h.mustCommand(CmdAsk, []any{map[string]any{"prompt": "say hello\nplease"}}, &res)
	if res.Status != agent.AskDone || res.Session != "s1" {
		t.Fatalf("ask = %+v", res)
	}
	if asks := f.Asks(); len(asks) != 1 || asks[0].Prompt != "say hello\nplease" || asks[0].Attachment != nil {
		t.Errorf("agent got %+v", asks)
	}

	// The transcript, in order, as the agent sent it.
	var kinds []string
	for _, m := range h.c.Notes(MethodTranscript) {
		ev := decode[agent.Event](t, m.Params)
		kinds = append(kinds, ev.Kind+map[bool]string{true: "+", false: ""}[ev.Delta])
	}
	want := []string{"user", "assistant+", "assistant+", "assistant", "assistant+", "assistant+", "assistant"}
	if !slices.Equal(kinds, want) {
		t.Errorf("transcript kinds = %v, want %v", kinds, want)
	}
	// Event JSON: delta is always there, zero tokens and absent args are not.
	first := string(h.c.Notes(MethodTranscript)[0].Params)
	if !strings.Contains(first, `"delta":false`) || strings.Contains(first, `"tokens"`) || strings.Contains(first, `"args"`) {
		t.Errorf("user event JSON = %s", first)
	}

	// Progress on a server-created token: create, begin, a report per round, end.
	h.c.Wait(h.ctx, func(_, requests []lsptest.Message) bool { return len(requests) > 0 })
	creates := h.c.Requests("window/workDoneProgress/create")
	if len(creates) != 1 {
		t.Fatalf("%d progress creates, want 1", len(creates))
	}
	token := decode[struct{ Token json.RawMessage }](t, creates[0].Params).Token
	h.c.Wait(h.ctx, func(notes, _ []lsptest.Message) bool { return len(progressKinds(t, notes, token)) == 4 })
	if got := progressKinds(t, h.c.Notes(""), token); !slices.Equal(got, []string{"begin", "report", "report", "end"}) {
		t.Errorf("progress = %v, want begin, report, report, end", got)
	}
	begin := progressValues(t, h.c.Notes(""), token)[0]
	if begin.Title != "Reika" || begin.Message != "say hello …" || !begin.Cancellable {
		t.Errorf("begin = %+v", begin)
	}
	if r := progressValues(t, h.c.Notes(""), token)[1]; r.Message != "round 1 · ctx 1k/24k" {
		t.Errorf("first report = %+v", r)
	}

	// A status after every round (the agent's), then one not busy at the end.
	var busy []bool
	for _, m := range h.c.Notes(MethodStatus) {
		busy = append(busy, decode[agent.Status](t, m.Params).Busy)
	}
	if n := len(busy); n < 4 || !busy[n-3] || !busy[n-2] || busy[n-1] {
		t.Errorf("status busy sequence = %v, want ..., true, true, false", busy)
	}
}

// progressValues returns the $/progress values on token, in order.
func progressValues(t *testing.T, notes []lsptest.Message, token json.RawMessage) []progressValue {
	t.Helper()
	var out []progressValue
	for _, m := range notes {
		if m.Method != "$/progress" {
			continue
		}
		p := decode[struct {
			Token json.RawMessage
			Value progressValue
		}](t, m.Params)
		if string(p.Token) == string(token) {
			out = append(out, p.Value)
		}
	}
	return out
}

func progressKinds(t *testing.T, notes []lsptest.Message, token json.RawMessage) []string {
	var kinds []string
	for _, v := range progressValues(t, notes, token) {
		kinds = append(kinds, v.Kind)
	}
	return kinds
}
