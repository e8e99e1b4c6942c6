package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/reika-lsp/reika-lsp/internal/atomicfile"
)

// editConfirmWait bounds how long WriteFile waits for the editor to report
// an applied edit with didChange (Neovim debounces changes) before it
// relies on what it wrote.
const editConfirmWait = 2 * time.Second

// workspace is the agent's view of the project (agent.Workspace): open
// buffers win over the disk, and writes go through the editor when it can
// apply edits.
type workspace struct{ s *server }

func (w workspace) Root() string {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.s.root
}

func (w workspace) ReadFile(path string) ([]byte, error) { return w.s.docs.read(path) }

// OverlaidPaths implements tools.OverlaidFiles: grep reads these through
// ReadFile and may search the rest on disk with ripgrep.
func (w workspace) OverlaidPaths() []string { return w.s.docs.overlaidPaths() }

func (w workspace) WriteFile(ctx context.Context, path string, content []byte) error {
	if err := w.s.writeFile(ctx, path, content); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeFile replaces path's content: with workspace/applyEdit when the
// client supports it (open buffers and undo stay right), else atomically on
// disk. A file that does not exist yet is created through the editor only
// when the client supports CreateFile operations. The editor leaves what it
// edited unsaved; reika's clients save it (when the user had no unsaved
// changes there), so the commands the agent runs next see the edit.
func (s *server) writeFile(ctx context.Context, path string, content []byte) error {
	if !filepath.IsAbs(path) {
		return errors.New("the path is not absolute")
	}
	s.mu.Lock()
	caps := s.caps
	s.mu.Unlock()
	if !caps.applyEdit {
		return s.writeDisk(path, content)
	}
	if doc, ok := s.docs.openDoc(path); ok {
		return s.editOpen(ctx, path, doc, content, caps)
	}
	old, err := os.ReadFile(path)
	switch {
	case err == nil:
		edit, changed := textEdit(string(old), string(content))
		if !changed {
			return nil
		}
		if err := s.applyEdit(ctx, s.editLabel(path), docEdit(string(uri.File(path)), nil, edit, caps)); err != nil {
			return err
		}
		s.docs.written(path, content, true)
		return nil
	case errors.Is(err, fs.ErrNotExist):
		if !caps.createFiles {
			return s.writeDisk(path, content)
		}
		return s.createViaEditor(ctx, path, content)
	default:
		return err
	}
}

func (s *server) writeDisk(path string, content []byte) error {
	if err := atomicfile.Write(path, content); err != nil {
		return err
	}
	s.docs.written(path, content, false)
	return nil
}

// editOpen edits an open document at the version the server knows, then
// waits (briefly) for the editor's didChange so the next read sees the
// buffer as the editor has it.
func (s *server) editOpen(ctx context.Context, path string, doc snapshot, content []byte, caps clientCaps) error {
	edit, changed := textEdit(doc.text, string(content))
	if !changed {
		return nil
	}
	version := doc.version
	if err := s.applyEdit(ctx, s.editLabel(path), docEdit(doc.uri, &version, edit, caps)); err != nil {
		return err
	}
	if !s.docs.waitVersion(ctx, doc.key, doc.version, editConfirmWait) {
		s.docs.written(path, content, true)
	}
	return nil
}

func (s *server) createViaEditor(ctx context.Context, path string, content []byte) error {
	u := uri.File(path)
	ignore := true
	changes := []protocol.DocumentChange{
		&protocol.CreateFile{Kind: "create", URI: u, Options: &protocol.CreateFileOptions{IgnoreIfExists: &ignore}},
	}
	if len(content) > 0 {
		changes = append(changes, &protocol.TextDocumentEdit{
			TextDocument: protocol.OptionalVersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u}},
			Edits:        []protocol.TextDocumentEditElement{&protocol.TextEdit{NewText: string(content)}},
		})
	}
	if err := s.applyEdit(ctx, s.editLabel(path), protocol.WorkspaceEdit{DocumentChanges: changes}); err != nil {
		return err
	}
	s.docs.written(path, content, true)
	return nil
}

func (s *server) editLabel(path string) string {
	return "Reika: write " + s.relPath(path)
}

// relPath is path relative to the workspace root when inside it.
func (s *server) relPath(path string) string {
	s.mu.Lock()
	root := s.root
	s.mu.Unlock()
	if rel, err := filepath.Rel(root, path); err == nil && filepath.IsLocal(rel) {
		return filepath.ToSlash(rel)
	}
	return path
}

// applyEdit sends workspace/applyEdit and turns a refusal into an error.
func (s *server) applyEdit(ctx context.Context, label string, edit protocol.WorkspaceEdit) error {
	params := &protocol.ApplyWorkspaceEditParams{Label: &label, Edit: edit}
	var raw json.RawMessage
	if err := s.call(ctx, protocol.MethodWorkspaceApplyEdit, params, &raw); err != nil {
		return fmt.Errorf("the editor did not apply the edit: %w", err)
	}
	var res struct {
		Applied       bool   `json:"applied"`
		FailureReason string `json:"failureReason"`
	}
	if err := decodeParams(raw, &res); err != nil {
		return fmt.Errorf("the editor's answer to applyEdit: %w", err)
	}
	if !res.Applied {
		reason := res.FailureReason
		if reason == "" {
			reason = "no reason given"
		}
		return fmt.Errorf("the editor refused the edit: %s", reason)
	}
	return nil
}

// docEdit is a WorkspaceEdit of one text edit to one document: versioned
// (documentChanges) when the client supports it, else a plain changes map.
// A nil version means the document is not open.
func docEdit(docURI string, version *int32, edit protocol.TextEdit, caps clientCaps) protocol.WorkspaceEdit {
	u := uri.URI(docURI)
	if caps.documentChanges {
		return protocol.WorkspaceEdit{DocumentChanges: []protocol.DocumentChange{&protocol.TextDocumentEdit{
			TextDocument: protocol.OptionalVersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u}, Version: version},
			Edits:        []protocol.TextDocumentEditElement{&edit},
		}}}
	}
	return protocol.WorkspaceEdit{Changes: map[uri.URI][]protocol.TextEdit{u: {edit}}}
}

// textEdit is the single edit turning old into new: the span between their
// common prefix and common suffix, so the rest of the buffer (and the
// user's cursor in it) is left alone. changed is false when they are equal.
func textEdit(old, new string) (edit protocol.TextEdit, changed bool) {
	if old == new {
		return protocol.TextEdit{}, false
	}
	start, end, text := diffSpan(old, new)
	sl, sc := positionAt(old, start)
	el, ec := positionAt(old, end)
	return protocol.TextEdit{
		Range: protocol.Range{
			Start: protocol.Position{Line: uint32(sl), Character: uint32(sc)},
			End:   protocol.Position{Line: uint32(el), Character: uint32(ec)},
		},
		NewText: text,
	}, true
}

// diffSpan returns the byte span [start, end) of old that differs from new
// and the text replacing it. Both ends lie on positions (character
// boundaries, never between "\r" and "\n"), so the edit survives the trip
// through UTF-16 positions.
func diffSpan(old, new string) (start, end int, text string) {
	n := min(len(old), len(new))
	p := 0
	for p < n && old[p] == new[p] {
		p++
	}
	q := 0
	for q < n-p && old[len(old)-1-q] == new[len(new)-1-q] {
		q++
	}
	// Round the start down and the end up to positions of old.
	start = roundDown(old, p)
	end = len(old) - q
	for end < len(old) && roundDown(old, end) != end {
		end++
	}
	return start, end, new[start : len(new)-(len(old)-end)]
}

// roundDown is off moved back to the nearest position of text.
func roundDown(text string, off int) int {
	line, char := positionAt(text, off)
	return offsetAt(text, line, char)
}
