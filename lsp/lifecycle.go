package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/reika-lsp/reika-lsp/agent"
)

// configPullTimeout bounds a workspace/configuration request.
const configPullTimeout = 10 * time.Second

func (s *server) initialize(_ context.Context, raw json.RawMessage) (any, error) {
	var p initializeParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, invalidParams("initialize: %v", err)
	}
	root, rootURI := workspaceRoot(&p)
	opts, warn := reikaOptions(p.InitializationOptions)
	if warn != "" {
		s.logf("lsp: %s", warn)
	}
	w := p.Capabilities.Workspace
	caps := clientCaps{
		applyEdit:          w.ApplyEdit,
		documentChanges:    w.WorkspaceEdit.DocumentChanges,
		createFiles:        w.WorkspaceEdit.DocumentChanges && slices.Contains(w.WorkspaceEdit.ResourceOperations, "create"),
		workDoneProgress:   p.Capabilities.Window.WorkDoneProgress,
		showMessageRequest: len(p.Capabilities.Window.ShowMessage) > 0 && string(p.Capabilities.Window.ShowMessage) != "null",
	}

	s.mu.Lock()
	s.caps = caps
	s.root, s.rootURI = root, rootURI
	s.initSettings, s.editorSettings = opts, opts
	s.initialized = true
	s.mu.Unlock()
	s.logf("lsp: initialize from %s %s, workspace %s", orUnknown(p.ClientInfo.Name), p.ClientInfo.Version, root)

	return initializeResult(s.cfg.Version), nil
}

func orUnknown(s string) string {
	if s == "" {
		return "an unnamed client"
	}
	return s
}

// initializeResult is the server's capabilities (PROTOCOL.md).
func initializeResult(version string) *protocol.InitializeResult {
	openClose, supported := true, true
	change := protocol.TextDocumentSyncKindIncremental
	r := &protocol.InitializeResult{
		Capabilities: protocol.ServerCapabilities{
			PositionEncoding: protocol.PositionEncodingKindUTF16,
			TextDocumentSync: &protocol.TextDocumentSyncOptions{OpenClose: &openClose, Change: &change},
			CodeActionProvider: &protocol.CodeActionOptions{
				CodeActionKinds: []protocol.CodeActionKind{KindCompactContext},
			},
			ExecuteCommandProvider: protocol.ExecuteCommandOptions{Commands: slices.Clone(Commands)},
			Workspace: &protocol.WorkspaceOptions{
				WorkspaceFolders: &protocol.WorkspaceFoldersServerCapabilities{Supported: &supported},
			},
		},
		ServerInfo: protocol.ServerInfo{Name: "reika-lsp"},
	}
	if version != "" {
		r.ServerInfo.Version = protocol.NewOptional(version)
	}
	return r
}

// workspaceRoot picks the workspace directory: the first workspace folder,
// else rootUri, else rootPath, else the current directory.
func workspaceRoot(p *initializeParams) (root, rootURI string) {
	var candidates []string
	for _, f := range p.WorkspaceFolders {
		candidates = append(candidates, f.URI)
	}
	candidates = append(candidates, p.RootURI)
	for _, c := range candidates {
		if path, ok := fileURIPath(c); ok {
			return resolveDir(path), c
		}
	}
	if p.RootPath != "" {
		root = resolveDir(p.RootPath)
		return root, string(uri.File(root))
	}
	wd, err := os.Getwd()
	if err != nil {
		wd = string(filepath.Separator)
	}
	root = resolveDir(wd)
	return root, string(uri.File(root))
}

// resolveDir makes path absolute and resolves symlinks when it can.
func resolveDir(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	return filepath.Clean(path)
}

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

func (s *server) initializedNote(json.RawMessage) {
	s.sendStatus(placeholderStatus(agent.LevelOK, "Reika is starting…"), true)
	s.startAgent()
}

// startAgent builds the agent in the background, once.
func (s *server) startAgent() {
	s.mu.Lock()
	if s.agentStarted {
		s.mu.Unlock()
		return
	}
	s.agentStarted = true
	editor := s.editorSettings
	s.mu.Unlock()
	s.goTracked(func() {
		defer close(s.ready)
		s.buildAgent(editor)
	})
}

// buildAgent loads the settings and calls NewAgent. On failure the status
// says why, at level error, and the server goes on without an agent.
func (s *server) buildAgent(editor json.RawMessage) {
	settings, err := s.loadSettings(editor)
	if err != nil {
		s.agentFailed(fmt.Errorf("settings: %w", err))
		return
	}
	svc, err := s.newAgent(settings)
	if err != nil {
		s.agentFailed(err)
		return
	}
	s.mu.Lock()
	if s.shutdownSeen.Load() {
		s.mu.Unlock()
		if err := svc.Close(); err != nil {
			s.logf("lsp: closing the agent: %v", err)
		}
		return
	}
	s.svc, s.svcErr = svc, nil
	s.debug = settings.Debug
	s.mu.Unlock()
	s.sendStatus(svc.Status(), true)
}

func (s *server) newAgent(settings agent.Settings) (svc agent.Service, err error) {
	if s.cfg.NewAgent == nil {
		return nil, errors.New("no agent is configured")
	}
	defer func() {
		if r := recover(); r != nil {
			svc, err = nil, fmt.Errorf("building the agent panicked: %v", r)
		}
	}()
	svc, err = s.cfg.NewAgent(agent.Options{
		Workspace: workspace{s},
		Approver:  approver{s},
		Events:    events{s},
		Settings:  settings,
		Logf:      s.logf,
	})
	if err == nil && svc == nil {
		err = errors.New("NewAgent returned no agent")
	}
	return svc, err
}

func (s *server) agentFailed(err error) {
	s.mu.Lock()
	s.svcErr = err
	s.mu.Unlock()
	s.logf("lsp: no agent: %v", err)
	s.showMessage(agent.LevelError, "Reika: "+err.Error())
	s.sendStatus(placeholderStatus(agent.LevelError, "Reika is not running: "+err.Error()), true)
}

func (s *server) loadSettings(editor json.RawMessage) (agent.Settings, error) {
	return agent.LoadSettings(agent.SettingsSource{Editor: editor, Getenv: s.cfg.Getenv, ConfigFile: s.cfg.ConfigFile})
}

// agent returns the agent, starting it if initialized never came and
// waiting for it to be built. The error says why there is none.
func (s *server) agent(ctx context.Context) (agent.Service, error) {
	s.startAgent()
	select {
	case <-s.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.svc == nil {
		reason := "the agent is not available"
		if s.svcErr != nil {
			reason = s.svcErr.Error()
		}
		return nil, requestFailed("Reika is not running: %s", reason)
	}
	return s.svc, nil
}

// currentAgent returns the agent if it is built, without waiting.
func (s *server) currentAgent() agent.Service {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.svc
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

func (s *server) shutdown(context.Context, json.RawMessage) (any, error) {
	s.shutdownSeen.Store(true)
	s.stopLife()
	s.closeAgent()
	return nil, nil
}

// exit ends the process: status 0 after shutdown, 1 otherwise.
func (s *server) exit(json.RawMessage) {
	s.exitOnce.Do(func() {
		code := 1
		if s.shutdownSeen.Load() {
			code = 0
		}
		s.stopLife()
		s.closeAgent()
		s.logf("lsp: exit (status %d)", code)
		s.cfg.Exit(code)
		close(s.exited)
	})
}
