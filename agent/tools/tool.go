// Package tools holds the agent's tools, one file per tool (docs/design.md §4):
// read, write, edit, bash, grep, glob, fetch_url and subagent. A tool error
// the model can fix comes back as a ctxwin.Result with IsError set; a Go error means
// something broke.
package tools

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/reika-lsp/reika-lsp/agent/approval"
	"github.com/reika-lsp/reika-lsp/ctxwin"
)

// Tool is one tool the model can call.
type Tool interface {
	// Spec is the definition sent in the fixed prefix of every request.
	// It never changes during a session.
	Spec() ctxwin.ToolSpec
	// Run executes one call. args is the model's JSON arguments.
	Run(ctx context.Context, env *Env, args json.RawMessage) (ctxwin.Result, error)
}

// A call returns a ctxwin.Result, the type the history keeps: the tool
// fills what it did (Kind, one of ctxwin's Kind constants, Text before any
// cut to fit the window — the agent cuts, not the tool — IsError for an
// error the model can fix, the Summary a shed collapses to, the Path and
// line range of a read, write or edit, the whole file a read read in
// Source for its outline, SavedTo for the file holding a long output, the URL or
// Query); the agent adds CallID, Tool and Task.

// Env is what tools may touch. The agent builds one per session.
type Env struct {
	// Root is the workspace root: absolute, symlinks resolved.
	Root string
	// Files reads and writes the workspace; open editor buffers win over disk.
	Files Files
	// Approve asks the user (or the approve setting) whether a call may run.
	// It returns false when denied or unanswered.
	Approve func(ctx context.Context, a approval.Request) bool
	// WouldAsk reports whether a call of kind would be put to the user
	// (rather than allowed by the approve setting or for the session); nil
	// means it would.
	WouldAsk func(kind string) bool
	// TempDir is where long outputs are saved: the agent gives each session
	// a directory beside its log, kept as long as the session. Read-only
	// tools may read under it without approval.
	TempDir string
	// Subagent runs a child session on task and returns its report.
	Subagent func(ctx context.Context, task string) (string, error)
	// HTTP is the client of fetch_url; nil means http.DefaultClient.
	HTTP *http.Client
	// Jobs are the session's background commands (bash with background
	// true), stopped when the session ends; nil means bash cannot start
	// one.
	Jobs *Jobs
	// FetchAllowHosts are hosts fetch_url may reach although they are,
	// or resolve to, link-local or private addresses (fetch_guard.go).
	FetchAllowHosts []string
}

// Files is the workspace's file access.
type Files interface {
	// ReadFile returns the content of an open buffer when the editor has one,
	// else the file on disk. path is absolute.
	ReadFile(path string) ([]byte, error)
	// WriteFile replaces the file's content, through the editor when it can
	// apply edits, else atomically on disk. path is absolute.
	WriteFile(ctx context.Context, path string, content []byte) error
}

// OverlaidFiles is Files that can tell which paths it may serve from
// memory rather than from the disk (open editor buffers, edits the editor
// has not saved). grep searches the other files on the disk with ripgrep
// when it is installed; with Files that cannot tell, it reads every file
// through ReadFile.
type OverlaidFiles interface {
	Files
	// OverlaidPaths are the absolute paths whose ReadFile may differ from
	// the file on disk (a path may be named through symlinks or resolved).
	OverlaidPaths() []string
}
