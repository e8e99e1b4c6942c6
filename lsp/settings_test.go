package lsp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/llm"
	"github.com/reika-lsp/reika-lsp/lsp/lsptest"
)

func TestSettingsFromInitializationOptions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  any
		model string
		debug bool
	}{
		{"object", map[string]any{"reika": map[string]any{"model": "qwen3-coder", "contextWindow": 24000, "debug": true}}, "qwen3-coder", true},
		{"empty reika", map[string]any{"reika": []any{}}, "", false},
		{"empty options", []any{}, "", false},
		{"null", nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, harnessOptions{})
			h.initialize(nil, tc.opts)
			s := h.agent().Opts.Settings
			if s.Model != tc.model || s.Debug != tc.debug || s.BaseURL != llm.DefaultBaseURL {
				t.Errorf("settings = %+v", s)
			}
			if tc.model != "" && (s.ContextWindow != 24000 || s.Sources["model"] != "editor") {
				t.Errorf("settings = %+v, want the window and the source from the editor", s)
			}
		})
	}
}

// Settings that do not validate leave the server running without an agent:
// the status says why (level error), so does a message, and commands fail
// with that reason. Fixing them through the configuration builds the agent.
func TestBadSettingsThenFixed(t *testing.T) {
	config := make(chan any, 1)
	h := start(t, harnessOptions{hooks: lsptest.Hooks{Configuration: func(json.RawMessage) (any, error) {
		return []any{<-config}, nil
	}}})
	h.initialize(nil, map[string]any{"reika": map[string]any{"contextWindow": "lots"}})
	st := h.waitNote(MethodStatus, func(m lsptest.Message) bool { return strings.Contains(string(m.Params), `"level":"error"`) })
	if !strings.Contains(string(st.Params), "contextWindow") {
		t.Errorf("error status does not name the setting: %s", st.Params)
	}
	msg := h.waitNote("window/showMessage", nil)
	if !strings.Contains(string(msg.Params), `"type":1`) || !strings.Contains(string(msg.Params), "contextWindow") {
		t.Errorf("message = %s", msg.Params)
	}
	var res agent.AskResult
	h.mustCommand(CmdAsk, []any{map[string]any{"prompt": "p"}}, &res)
	if res.Status != agent.AskError || !strings.Contains(res.Message, "contextWindow") {
		t.Errorf("ask without an agent = %+v", res)
	}
	if err := h.command(CmdCompact, nil, nil); rpcCode(err) != -32803 || !strings.Contains(err.Error(), "contextWindow") {
		t.Errorf("compact without an agent: %v, want RequestFailed naming the problem", err)
	}
	var status agent.Status
	h.mustCommand(CmdStatus, nil, &status)
	if status.Level != agent.LevelError || status.Text != "ctx –" {
		t.Errorf("reika.status without an agent = %+v", status)
	}

	config <- map[string]any{"contextWindow": 32000}
	h.c.Notify(h.ctx, "workspace/didChangeConfiguration", map[string]any{"settings": nil})
	if f := h.agent(); f.Opts.Settings.ContextWindow != 32000 {
		t.Errorf("agent built with %+v", f.Opts.Settings)
	}
	h.waitNote(MethodStatus, func(m lsptest.Message) bool { return strings.Contains(string(m.Params), `"model":"fake"`) })
}

// Settings pushed in didChangeConfiguration are used without a pull; a
// pull that returns null keeps the initial settings; bad new settings are
// reported and not applied.
func TestSettingsChanges(t *testing.T) {
	h := start(t, harnessOptions{hooks: lsptest.Hooks{Configuration: func(json.RawMessage) (any, error) {
		return []any{nil}, nil
	}}})
	h.initialize(nil, map[string]any{"reika": map[string]any{"model": "initial"}})
	f := h.agent()

	h.c.Notify(h.ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"reika": map[string]any{"model": "pushed"}}})
	waitFor(t, h.ctx, func() bool { return len(f.Updates()) == 1 })
	if got := f.Updates()[0].Model; got != "pushed" || len(h.c.Requests("workspace/configuration")) != 0 {
		t.Errorf("pushed settings: model %q, %d pulls", got, len(h.c.Requests("workspace/configuration")))
	}

	h.c.Notify(h.ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"other": 1}})
	waitFor(t, h.ctx, func() bool { return len(f.Updates()) == 2 })
	if got := f.Updates()[1].Model; got != "initial" {
		t.Errorf("after a pull that returned null: model %q, want the initial settings", got)
	}
	pull := decode[struct {
		Items []struct{ Section, ScopeURI string }
	}](t, h.c.Requests("workspace/configuration")[0].Params)
	if len(pull.Items) != 1 || pull.Items[0].Section != "reika" || pull.Items[0].ScopeURI != "file://"+h.root {
		t.Errorf("configuration request = %+v", pull)
	}

	h.c.Notify(h.ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"reika": map[string]any{"approve": "sometimes"}}})
	h.waitNote("window/showMessage", func(m lsptest.Message) bool { return strings.Contains(string(m.Params), "approve") })
	if n := len(f.Updates()); n != 2 {
		t.Errorf("bad settings were applied (%d updates)", n)
	}
}

// A client that cannot answer workspace/configuration keeps its settings.
func TestConfigurationPullFails(t *testing.T) {
	h := start(t, harnessOptions{hooks: lsptest.Hooks{Configuration: func(json.RawMessage) (any, error) {
		return nil, errors.New("unsupported")
	}}})
	h.initialize(nil, map[string]any{"reika": map[string]any{"model": "initial"}})
	f := h.agent()
	h.c.Notify(h.ctx, "workspace/didChangeConfiguration", map[string]any{})
	waitFor(t, h.ctx, func() bool { return len(f.Updates()) == 1 })
	if got := f.Updates()[0].Model; got != "initial" {
		t.Errorf("model = %q", got)
	}
}

func TestNewAgentFails(t *testing.T) {
	h := start(t, harnessOptions{newAgent: func(agent.Options) (agent.Service, error) {
		return nil, errors.New("engine client: bad base URL")
	}})
	h.initialize(nil, nil)
	st := h.waitNote(MethodStatus, func(m lsptest.Message) bool { return strings.Contains(string(m.Params), "bad base URL") })
	if s := decode[agent.Status](t, st.Params); s.Level != agent.LevelError {
		t.Errorf("status = %+v", s)
	}
	var res agent.AskResult
	h.mustCommand(CmdAsk, []any{map[string]any{"prompt": "p"}}, &res)
	if res.Status != agent.AskError || !strings.Contains(res.Message, "bad base URL") {
		t.Errorf("ask = %+v", res)
	}
	if err := h.command(CmdNewSession, nil, nil); err == nil || !strings.Contains(err.Error(), "bad base URL") {
		t.Errorf("newSession: %v", err)
	}
	var a []json.RawMessage
	if err := h.c.Call(h.ctx, "textDocument/codeAction", codeActionRequest(nil), &a); err != nil || len(a) != 0 {
		t.Errorf("codeAction without an agent: %v, %d actions", err, len(a))
	}
	code, err := h.shutdownExit(true)
	if code != 0 || err != nil {
		t.Errorf("shutdown+exit without an agent: %d, %v", code, err)
	}
}

// A client that never sends initialized still gets an agent for its first
// command.
func TestAgentWithoutInitialized(t *testing.T) {
	h := start(t, harnessOptions{})
	if err := h.c.Call(h.ctx, "initialize", map[string]any{"capabilities": map[string]any{}}, nil); err != nil {
		t.Fatal(err)
	}
	var res agent.AskResult
	h.mustCommand(CmdAsk, []any{map[string]any{"prompt": "p"}}, &res)
	if res.Status != agent.AskDone {
		t.Errorf("ask = %+v", res)
	}
}
