package lsp

import (
	"context"
	"encoding/json"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/reika-lsp/reika-lsp/agent"
)

// configPullTimeout bounds a workspace/configuration request.
const configPullTimeout = 10 * time.Second

// reikaOptions returns the "reika" object of initializationOptions (nil
// when there is none) and a warning when the options look misplaced.
func reikaOptions(raw json.RawMessage) (json.RawMessage, string) {
	if !isObject(raw) {
		return nil, ""
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, "initializationOptions: " + err.Error()
	}
	if r, ok := m["reika"]; ok {
		return r, ""
	}
	if len(m) > 0 {
		return nil, `initializationOptions has no "reika" object; its other keys are ignored (settings go in {"reika": {...}})`
	}
	return nil, ""
}

// loadSettings resolves the settings from the editor's (a "reika" object),
// the environment and the config file of Config.
func (s *server) loadSettings(editor json.RawMessage) (agent.Settings, error) {
	return agent.LoadSettings(agent.SettingsSource{Editor: editor, Getenv: s.cfg.Getenv, ConfigFile: s.cfg.ConfigFile})
}

// didChangeConfiguration applies the editor's new settings: those in the
// notification when it carries a "reika" object (VS Code's push), else
// those workspace/configuration returns for section "reika" (the pull
// model). The pull is a request to the client, so it runs off the read
// loop; a newer change supersedes an older one still waiting.
func (s *server) didChangeConfiguration(raw json.RawMessage) {
	var p didChangeConfigurationParams
	if err := decodeParams(raw, &p); err != nil {
		s.logf("lsp: didChangeConfiguration: %v", err)
	}
	pushed, _ := reikaOptions(p.Settings)
	s.mu.Lock()
	s.configGen++
	gen := s.configGen
	s.mu.Unlock()
	s.goTracked(func() {
		s.configMu.Lock()
		defer s.configMu.Unlock()
		s.mu.Lock()
		stale := gen != s.configGen
		s.mu.Unlock()
		if stale {
			return
		}
		editor := pushed
		if editor == nil {
			editor = s.pullConfiguration()
		}
		s.applySettings(editor)
	})
}

// pullConfiguration asks the client for section "reika". When the client
// cannot answer, or has no such section, the initializationOptions
// settings stay in force.
func (s *server) pullConfiguration() json.RawMessage {
	s.mu.Lock()
	section, scope, fallback := "reika", s.rootURI, s.initSettings
	s.mu.Unlock()
	scopeURI := uri.URI(scope)
	params := &protocol.ConfigurationParams{Items: []protocol.ConfigurationItem{{Section: &section, ScopeURI: &scopeURI}}}
	ctx, cancel := context.WithTimeout(s.life, configPullTimeout)
	defer cancel()
	var raw json.RawMessage
	if err := s.call(ctx, protocol.MethodWorkspaceConfiguration, params, &raw); err != nil {
		s.logf("lsp: workspace/configuration: %v (keeping the initial settings)", err)
		return fallback
	}
	var items []json.RawMessage
	if err := decodeParams(raw, &items); err != nil || len(items) == 0 || string(items[0]) == "null" {
		return fallback
	}
	return items[0]
}

// applySettings validates the editor's settings and hands them to the
// agent, or builds the agent when an earlier attempt failed.
func (s *server) applySettings(editor json.RawMessage) {
	settings, err := s.loadSettings(editor)
	if err != nil {
		s.logf("lsp: settings: %v", err)
		s.showMessage(agent.LevelError, "Reika settings: "+err.Error())
		return
	}
	s.mu.Lock()
	s.editorSettings = editor
	s.debug = settings.Debug
	started := s.agentStarted
	s.mu.Unlock()
	if !started {
		return // initialized has not come yet: startAgent will use them
	}
	select {
	case <-s.ready:
	case <-s.life.Done():
		return
	}
	if svc := s.currentAgent(); svc != nil {
		if err := svc.UpdateSettings(settings); err != nil {
			s.logf("lsp: updating the settings: %v", err)
			s.showMessage(agent.LevelError, "Reika settings: "+err.Error())
			return
		}
		s.sendStatus(svc.Status(), true)
		return
	}
	if s.shutdownSeen.Load() {
		return
	}
	s.buildAgent(editor)
}
