package lsp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/reika-lsp/reika-lsp/agent"
)

// initialize records the client's capabilities, the workspace root and the
// initializationOptions settings, and answers with the server's
// capabilities. It runs on the read loop: nothing may overtake it.
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

// initializeResult is the server's capabilities (docs/protocol.md).
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

// initializedNote answers initialized: a placeholder status at once, then
// the agent, built in the background (agent.go).
func (s *server) initializedNote(json.RawMessage) {
	s.sendStatus(placeholderStatus(agent.LevelOK, "Reika is starting…"), true)
	s.startAgent()
}

// shutdown stops what the server started and closes the agent; gate
// refuses the requests that come after it.
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
