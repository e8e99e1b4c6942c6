package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/reika-lsp/reika-lsp/agent"
	"github.com/reika-lsp/reika-lsp/agent/approval"
	"github.com/reika-lsp/reika-lsp/agent/tools"
	"github.com/reika-lsp/reika-lsp/lsp/lsptest"
)

func openDoc(h *harness, path, text string, version int) {
	h.c.Notify(h.ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": "file://" + path, "languageId": "go", "version": version, "text": text,
	}})
}

func change(h *harness, path string, version int, changes ...any) {
	h.c.Notify(h.ctx, "textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": "file://" + path, "version": version},
		"contentChanges": changes,
	})
}

func rangeChange(l1, c1, l2, c2 int, text string) map[string]any {
	return map[string]any{
		"range": map[string]any{"start": map[string]any{"line": l1, "character": c1}, "end": map[string]any{"line": l2, "character": c2}},
		"text":  text,
	}
}

// sync waits until every notification sent so far has been applied: the
// server answers a request only after the notifications before it.
func (h *harness) sync() { h.t.Helper(); h.mustCommand(CmdStatus, nil, nil) }

func TestToolsReadTheUnsavedBuffer(t *testing.T) {
	h := start(t, harnessOptions{})
	f := h.initialized()
	ws := f.Opts.Workspace
	if ws.Root() != h.root {
		t.Errorf("Root() = %q, want %q", ws.Root(), h.root)
	}
	path := filepath.Join(h.root, "a.go")
	os.WriteFile(path, []byte("on disk\n"), 0o644)

	read := func() string {
		t.Helper()
		h.sync()
		b, err := ws.ReadFile(path)
		if err != nil {
			t.Fatalf("ReadFile: %v", err)
		}
		return string(b)
	}
	if got := read(); got != "on disk\n" {
		t.Errorf("before didOpen: %q", got)
	}
	overlaid := func() []string { h.sync(); return ws.(tools.OverlaidFiles).OverlaidPaths() }
	if got := overlaid(); len(got) != 0 {
		t.Errorf("before didOpen, overlaid paths %q", got)
	}
	openDoc(h, path, "line 1\nline 2 😀 x\n", 1)
	if got := read(); got != "line 1\nline 2 😀 x\n" {
		t.Errorf("after didOpen: %q", got)
	}
	if got := overlaid(); !slices.Contains(got, path) {
		t.Errorf("after didOpen, overlaid paths %q lack %s", got, path)
	}
	// Two changes in one notification apply in order, positions in UTF-16.
	change(h, path, 2, rangeChange(1, 10, 1, 11, "y"), rangeChange(0, 0, 0, 4, "LINE"))
	if got := read(); got != "LINE 1\nline 2 😀 y\n" {
		t.Errorf("after incremental changes: %q", got)
	}
	change(h, path, 3, map[string]any{"text": "whole\r\ntext"})
	if got := read(); got != "whole\r\ntext" {
		t.Errorf("after a full change: %q", got)
	}
	change(h, path, 4, rangeChange(1, 0, 1, 0, ">"))
	if got := read(); got != "whole\r\n>text" {
		t.Errorf("after a change on a CRLF text: %q", got)
	}
	// A change the server cannot read drops the mirror: disk again, not a
	// wrong buffer.
	change(h, path, 5, map[string]any{"range": "bad", "text": "x"})
	if got := read(); got != "on disk\n" {
		t.Errorf("after a malformed change: %q", got)
	}
	openDoc(h, path, "reopened", 6)
	h.c.Notify(h.ctx, "textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": "file://" + path}})
	if got := read(); got != "on disk\n" {
		t.Errorf("after didClose: %q", got)
	}
	if got := overlaid(); len(got) != 0 {
		t.Errorf("after didClose, overlaid paths %q", got)
	}
	if !h.log.contains("no longer mirrored") {
		t.Error("the malformed change was not logged")
	}
}

// A document opened through a symlinked path is found by its real path,
// and the other way round.
func TestReadFileThroughSymlinks(t *testing.T) {
	h := start(t, harnessOptions{})
	f := h.initialized()
	real := filepath.Join(h.root, "real")
	os.Mkdir(real, 0o755)
	os.WriteFile(filepath.Join(real, "a.go"), []byte("disk"), 0o644)
	link := filepath.Join(h.root, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symlinks:", err)
	}
	openDoc(h, filepath.Join(link, "a.go"), "buffer", 1)
	h.sync()
	if b, _ := f.Opts.Workspace.ReadFile(filepath.Join(real, "a.go")); string(b) != "buffer" {
		t.Errorf("read by the real path = %q", b)
	}
}

// editorClient is a client that applies workspace/applyEdit to its own
// buffers and reports the change with didChange, like an editor.
type editorClient struct {
	h     *harness
	mu    sync.Mutex
	texts map[string]string
	vers  map[string]int
	edits []json.RawMessage
}

func (e *editorClient) applyEdit(params json.RawMessage) (any, error) {
	e.mu.Lock()
	e.edits = append(e.edits, params)
	e.mu.Unlock()
	var p struct {
		Edit struct {
			DocumentChanges []struct {
				Kind         string
				URI          string
				TextDocument struct {
					URI     string
					Version *int
				}
				Edits []struct {
					Range   lspRange
					NewText string
				}
			}
			Changes map[string][]struct {
				Range   lspRange
				NewText string
			}
		}
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	for _, dc := range p.Edit.DocumentChanges {
		if dc.Kind == "create" {
			continue
		}
		e.mu.Lock()
		uri := dc.TextDocument.URI
		if v, open := e.vers[uri]; open && (dc.TextDocument.Version == nil || *dc.TextDocument.Version != v) {
			e.mu.Unlock()
			return map[string]any{"applied": false, "failureReason": "version mismatch"}, nil
		}
		text := e.texts[uri]
		for _, ed := range dc.Edits {
			text = applyChange(text, contentChange{Range: &ed.Range, Text: ed.NewText})
		}
		e.texts[uri] = text
		v, open := e.vers[uri]
		e.vers[uri] = v + 1
		e.mu.Unlock()
		if open {
			change(e.h, strings.TrimPrefix(uri, "file://"), v+1, map[string]any{"text": text})
		}
	}
	return map[string]any{"applied": true}, nil
}

func TestWriteFileThroughTheEditor(t *testing.T) {
	ed := &editorClient{texts: map[string]string{}, vers: map[string]int{}}
	h := start(t, harnessOptions{hooks: lsptest.Hooks{ApplyEdit: ed.applyEdit}})
	ed.h = h
	f := h.initialized()
	ws := f.Opts.Workspace

	// An open document: a versioned edit of the changed span only.
	path := filepath.Join(h.root, "open.go")
	text := "package a\n\nfunc A() {}\n// 😀 end\n"
	os.WriteFile(path, []byte("stale disk"), 0o644)
	ed.texts["file://"+path], ed.vers["file://"+path] = text, 1
	openDoc(h, path, text, 1)
	h.sync()
	want := "package a\n\nfunc B() {}\n// 😀 end\n"
	if err := ws.WriteFile(h.ctx, path, []byte(want)); err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	if got, _ := ws.ReadFile(path); string(got) != want {
		t.Errorf("read after the write = %q", got)
	}
	if disk, _ := os.ReadFile(path); string(disk) != "stale disk" {
		t.Errorf("the disk was written: %q", disk)
	}
	edit := string(ed.edits[0])
	for _, s := range []string{`"version":1`, `"label":"Reika: write open.go"`, `"newText":"B"`, `"start":{"line":2,"character":5}`} {
		if !strings.Contains(edit, s) {
			t.Errorf("applyEdit params lack %s: %s", s, edit)
		}
	}

	// A file the editor does not have open: an unversioned edit; reads see
	// it until the file changes on disk.
	closed := filepath.Join(h.root, "closed.go")
	os.WriteFile(closed, []byte("one\ntwo\n"), 0o644)
	ed.texts["file://"+closed] = "one\ntwo\n"
	if err := ws.WriteFile(h.ctx, closed, []byte("one\n2\n")); err != nil {
		t.Fatalf("WriteFile of a closed file: %v", err)
	}
	if !strings.Contains(string(ed.edits[1]), `"version":null`) {
		t.Errorf("edit of a closed file = %s", ed.edits[1])
	}
	if got, _ := ws.ReadFile(closed); string(got) != "one\n2\n" {
		t.Errorf("read after writing a closed file = %q", got)
	}
	if got := ws.(tools.OverlaidFiles).OverlaidPaths(); !slices.Contains(got, closed) {
		t.Errorf("overlaid paths %q lack the file written through the editor", got)
	}
	os.WriteFile(closed, []byte("saved by someone else, longer"), 0o644)
	if got, _ := ws.ReadFile(closed); string(got) != "saved by someone else, longer" {
		t.Errorf("read after the disk changed = %q", got)
	}

	// A new file: CreateFile, then its text.
	fresh := filepath.Join(h.root, "dir", "new.go")
	if err := ws.WriteFile(h.ctx, fresh, []byte("new\n")); err != nil {
		t.Fatalf("WriteFile of a new file: %v", err)
	}
	if e := string(ed.edits[2]); !strings.Contains(e, `{"kind":"create","uri":"file://`+fresh+`"`) || !strings.Contains(e, `"newText":"new\n"`) {
		t.Errorf("edit creating a file = %s", e)
	}

	// Writing what is already there sends nothing.
	n := len(ed.edits)
	if err := ws.WriteFile(h.ctx, path, []byte(want)); err != nil || len(ed.edits) != n {
		t.Errorf("an unchanged write: %v, %d edits sent", err, len(ed.edits)-n)
	}

	// A refused edit is an error naming the reason.
	ed.vers["file://"+path] = 99
	err := ws.WriteFile(h.ctx, path, []byte("x"))
	if err == nil || !strings.Contains(err.Error(), "version mismatch") {
		t.Errorf("refused edit: %v", err)
	}
}

// With no documentChanges support, the edit is a plain changes map, and a
// new file goes to disk.
func TestWriteFileWithChangesOnly(t *testing.T) {
	var edits []json.RawMessage
	var mu sync.Mutex
	h := start(t, harnessOptions{hooks: lsptest.Hooks{ApplyEdit: func(p json.RawMessage) (any, error) {
		mu.Lock()
		edits = append(edits, p)
		mu.Unlock()
		return map[string]any{"applied": true}, nil
	}}})
	h.initialize(map[string]any{"workspace": map[string]any{"applyEdit": true}}, nil)
	ws := h.agent().Opts.Workspace
	path := filepath.Join(h.root, "a.txt")
	os.WriteFile(path, []byte("a"), 0o644)
	if err := ws.WriteFile(h.ctx, path, []byte("b")); err != nil {
		t.Fatal(err)
	}
	if len(edits) != 1 || !strings.Contains(string(edits[0]), `"changes":{"file://`+path+`":[{"range"`) {
		t.Errorf("edits = %s", edits)
	}
	fresh := filepath.Join(h.root, "new.txt")
	if err := ws.WriteFile(h.ctx, fresh, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(fresh); string(b) != "new" || len(edits) != 1 {
		t.Errorf("new file without CreateFile support: disk %q, %d edits", b, len(edits))
	}
}

// Without applyEdit, files are written atomically on disk, keeping their
// mode, and reads of an open buffer see the write until the editor
// reloads it.
func TestWriteFileOnDisk(t *testing.T) {
	h := start(t, harnessOptions{})
	h.initialize(map[string]any{}, nil)
	ws := h.agent().Opts.Workspace
	path := filepath.Join(h.root, "script.sh")
	os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755)
	openDoc(h, path, "#!/bin/sh\n", 1)
	h.sync()
	if err := ws.WriteFile(h.ctx, path, []byte("#!/bin/sh\necho hi\n")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if b, _ := os.ReadFile(path); err != nil || string(b) != "#!/bin/sh\necho hi\n" || fi.Mode().Perm() != 0o755 {
		t.Errorf("disk after the write: %q, mode %v, %v", b, fi.Mode(), err)
	}
	if got, _ := ws.ReadFile(path); string(got) != "#!/bin/sh\necho hi\n" {
		t.Errorf("read of the open buffer after a disk write = %q", got)
	}
	change(h, path, 2, map[string]any{"text": "reloaded"})
	h.sync()
	if got, _ := ws.ReadFile(path); string(got) != "reloaded" {
		t.Errorf("read after the editor's change = %q", got)
	}
	entries, _ := os.ReadDir(h.root)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".reika-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
	if err := ws.WriteFile(h.ctx, "relative.txt", nil); err == nil {
		t.Error("a relative path was written")
	}
}

func TestApprovals(t *testing.T) {
	answer := make(chan any, 1)
	h := start(t, harnessOptions{hooks: lsptest.Hooks{ShowMessageRequest: func(json.RawMessage) (any, error) {
		a := <-answer
		if err, ok := a.(error); ok {
			return nil, err
		}
		return a, nil
	}}})
	f := h.initialized()
	ap := approval.Request{Tool: "bash", Kind: "command", Summary: "run `rm -rf build`", Detail: strings.Repeat("x", 5000)}
	for _, tc := range []struct {
		answer any
		want   agent.Decision
	}{
		{map[string]any{"title": "Allow"}, agent.Allow},
		{map[string]any{"title": "Allow for this session"}, agent.AllowSession},
		{map[string]any{"title": "Deny"}, agent.Deny},
		{nil, agent.Deny},
		{map[string]any{"title": "Something else"}, agent.Deny},
		{errors.New("no"), agent.Deny},
	} {
		answer <- tc.answer
		if got := f.Opts.Approver.Approve(h.ctx, ap); got != tc.want {
			t.Errorf("answer %v: decision %v, want %v", tc.answer, got, tc.want)
		}
	}
	req := decode[struct {
		Type    int
		Message string
		Actions []struct{ Title string }
	}](t, h.c.Requests("window/showMessageRequest")[0].Params)
	// A command is shown whole: what is approved is what runs.
	if req.Type != 2 || req.Message != "Reika wants to run `rm -rf build`\n\n"+strings.Repeat("x", 5000) {
		t.Errorf("request = type %d, message %q… (%d bytes)", req.Type, truncate(req.Message, 60), len(req.Message))
	}
	if len(req.Actions) != 3 || req.Actions[0].Title != "Allow" || req.Actions[1].Title != "Allow for this session" || req.Actions[2].Title != "Deny" {
		t.Errorf("actions = %+v", req.Actions)
	}
	// What could hide part of a command from the user is shown as escapes.
	answer <- map[string]any{"title": "Deny"}
	f.Opts.Approver.Approve(h.ctx, approval.Request{Tool: "bash", Kind: "command", Summary: "run `echo hi`", Detail: "echo hi\x1b[2K\rrm -rf ~ \u202e"})
	reqs := h.c.Requests("window/showMessageRequest")
	hidden := decode[struct{ Message string }](t, reqs[len(reqs)-1].Params)
	if hidden.Message != "Reika wants to run `echo hi`\n\necho hi\\x1b[2K\\x0drm -rf ~ <U+202E>" {
		t.Errorf("a command with control characters is shown as %q", hidden.Message)
	}
	// A cancelled turn stops waiting for the answer: Deny.
	ctx, cancel := context.WithCancel(h.ctx)
	cancel()
	if got := f.Opts.Approver.Approve(ctx, ap); got != agent.Deny {
		t.Errorf("approval on a cancelled turn = %v", got)
	}
	answer <- nil // the client's late answer to that request
}

func TestApprovalWithoutClientSupportIsDenied(t *testing.T) {
	h := start(t, harnessOptions{})
	h.initialize(map[string]any{"window": map[string]any{"workDoneProgress": true}}, nil)
	f := h.agent()
	if got := f.Opts.Approver.Approve(h.ctx, approval.Request{Summary: "edit a.go"}); got != agent.Deny {
		t.Errorf("decision = %v, want Deny", got)
	}
	if n := len(h.c.Requests("")); n != 0 {
		t.Errorf("%d requests sent to a client that cannot answer them", n)
	}
}
