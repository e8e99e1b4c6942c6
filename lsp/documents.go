package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.lsp.dev/uri"

	"github.com/reika-lsp/reika-lsp/internal/regular"
)

// document is one buffer the editor has open.
type document struct {
	uri     string // as the client sent it (applyEdit must name it the same way)
	path    string // the file's path for file URIs, cleaned; "" otherwise
	real    string // path with symlinks resolved, when that differs
	version int32
	text    string
	// pending is what the server wrote to this document and the editor has
	// not yet confirmed with a didChange: reads return it until a change
	// with a version above pendingAfter arrives.
	pending      *string
	pendingAfter int32
}

// overlay is content written through the editor to a file it has not
// opened for us (the edit sits in an unsaved buffer). Reads return it while
// the file on disk is unchanged since the write; once the editor saves it,
// or anything else changes the file, the disk wins again.
type overlay struct {
	content []byte
	disk    diskStamp
}

type diskStamp struct {
	exists bool
	size   int64
	mtime  time.Time
}

func stampOf(path string) diskStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return diskStamp{}
	}
	return diskStamp{exists: true, size: fi.Size(), mtime: fi.ModTime()}
}

// documents is the store of open buffers: what the tools read instead of
// the disk. didOpen, didChange and didClose arrive in order on the read
// loop; the agent reads from its own goroutines.
type documents struct {
	logf func(string, ...any)

	mu       sync.Mutex
	byURI    map[string]*document // keyed by canonical URI; guarded by mu
	overlays map[string]overlay   // keyed by path; guarded by mu
	changed  chan struct{}        // closed and replaced on every change; guarded by mu
}

func newDocuments(logf func(string, ...any)) *documents {
	return &documents{
		logf:     logf,
		byURI:    map[string]*document{},
		overlays: map[string]overlay{},
		changed:  make(chan struct{}),
	}
}

// canonicalURI is the key of a document: URIs that name the same resource
// with different escaping compare equal.
func canonicalURI(s string) string {
	u, err := uri.Parse(s)
	if err != nil {
		return s
	}
	return string(u)
}

// fileURIPath returns the path of a file URI.
func fileURIPath(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	u, err := uri.Parse(s)
	if err != nil || u.Scheme() != "file" {
		return "", false
	}
	p := u.FsPath()
	if p == "" {
		return "", false
	}
	return filepath.Clean(p), true
}

// broadcastLocked wakes everyone waiting for a change.
func (d *documents) broadcastLocked() {
	close(d.changed)
	d.changed = make(chan struct{})
}

func (d *documents) open(p *didOpenParams) {
	doc := &document{uri: p.TextDocument.URI, version: p.TextDocument.Version, text: p.TextDocument.Text}
	if path, ok := fileURIPath(doc.uri); ok {
		doc.path = path
		if real, err := filepath.EvalSymlinks(path); err == nil && real != path {
			doc.real = real
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.byURI[canonicalURI(doc.uri)] = doc
	if ov, ok := d.overlays[doc.path]; ok && doc.path != "" {
		// The editor opened a file the server wrote through it. Its
		// didOpen may carry the text from before the edit, with the edit
		// following as a change: until then, what was written stands.
		delete(d.overlays, doc.path)
		if stampOf(doc.path) == ov.disk && string(ov.content) != doc.text {
			text := string(ov.content)
			doc.pending, doc.pendingAfter = &text, doc.version
		}
	}
	d.broadcastLocked()
}

// change applies a didChange. A change that cannot be applied leaves the
// store unable to mirror the buffer, so the document is dropped (reads go
// to the disk) rather than kept wrong.
func (d *documents) change(raw json.RawMessage) {
	var p didChangeParams
	if err := decodeStrict(raw, &p); err != nil {
		d.mu.Lock()
		defer d.mu.Unlock()
		var id struct {
			TextDocument textDocumentID `json:"textDocument"`
		}
		_ = json.Unmarshal(raw, &id)
		d.logf("lsp: didChange %s: %v; the document is no longer mirrored", id.TextDocument.URI, err)
		delete(d.byURI, canonicalURI(id.TextDocument.URI))
		d.broadcastLocked()
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	doc := d.byURI[canonicalURI(p.TextDocument.URI)]
	if doc == nil {
		d.logf("lsp: didChange for %s, which is not open", p.TextDocument.URI)
		return
	}
	for _, c := range p.ContentChanges {
		doc.text = applyChange(doc.text, c)
	}
	doc.version = p.TextDocument.Version
	if doc.pending != nil && doc.version > doc.pendingAfter {
		doc.pending = nil
	}
	d.broadcastLocked()
}

// applyChange applies one content change to text.
func applyChange(text string, c contentChange) string {
	if c.Range == nil {
		return c.Text
	}
	start := offsetAt(text, c.Range.Start.Line, c.Range.Start.Character)
	end := offsetAt(text, c.Range.End.Line, c.Range.End.Character)
	if end < start {
		start, end = end, start
	}
	return text[:start] + c.Text + text[end:]
}

func (d *documents) close(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.byURI, canonicalURI(key))
	d.broadcastLocked()
}

// findLocked returns the open document of a file path.
func (d *documents) findLocked(path string) *document {
	path = filepath.Clean(path)
	for _, doc := range d.byURI {
		if doc.path == path || doc.real == path {
			return doc
		}
	}
	return nil
}

// find returns the open document of a file path, also when the path and
// the document's URI reach the file through different symlinks.
func (d *documents) find(path string) *document {
	doc := d.findLocked(path)
	if doc != nil {
		return doc
	}
	if real, err := filepath.EvalSymlinks(path); err == nil && real != filepath.Clean(path) {
		return d.findLocked(real)
	}
	return nil
}

// overlaidPaths are the paths read may serve other than from the disk:
// open documents (by their path and real path) and what the server wrote
// through the editor.
func (d *documents) overlaidPaths() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var paths []string
	for _, doc := range d.byURI {
		for _, p := range []string{doc.path, doc.real} {
			if p != "" {
				paths = append(paths, p)
			}
		}
	}
	for p := range d.overlays {
		paths = append(paths, p)
	}
	return paths
}

// read returns the content of path as the editor has it: the open buffer,
// else what the server last wrote through the editor, else the disk.
func (d *documents) read(path string) ([]byte, error) {
	d.mu.Lock()
	if doc := d.find(path); doc != nil {
		text := doc.text
		if doc.pending != nil {
			text = *doc.pending
		}
		d.mu.Unlock()
		return []byte(text), nil
	}
	key := filepath.Clean(path)
	if ov, ok := d.overlays[key]; ok {
		if stampOf(key) == ov.disk {
			d.mu.Unlock()
			return append([]byte(nil), ov.content...), nil
		}
		delete(d.overlays, key)
	}
	d.mu.Unlock()
	return regular.Read(path) // never blocks on a FIFO
}

// snapshot is a copy of an open document's identity and text.
type snapshot struct {
	key     string
	uri     string
	version int32
	text    string
}

// openDoc returns a snapshot of the open document of path.
func (d *documents) openDoc(path string) (snapshot, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	doc := d.find(path)
	if doc == nil {
		return snapshot{}, false
	}
	return snapshot{key: canonicalURI(doc.uri), uri: doc.uri, version: doc.version, text: doc.text}, true
}

// byURIText returns the text of a document by URI: the open buffer, else
// the file on disk for file URIs.
func (d *documents) byURIText(s string) (text, path string, err error) {
	d.mu.Lock()
	doc := d.byURI[canonicalURI(s)]
	if doc != nil {
		text, path = doc.text, doc.path
	}
	d.mu.Unlock()
	if doc != nil {
		return text, path, nil
	}
	path, ok := fileURIPath(s)
	if !ok {
		return "", "", errors.New("not an open document nor a file: " + s)
	}
	b, err := d.read(path)
	return string(b), path, err
}

// written records content the server wrote to path: through the editor to
// an open document (confirmed by the editor's next change), or through
// the editor or to disk for a file the editor has not opened for us.
func (d *documents) written(path string, content []byte, viaEditor bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if doc := d.find(path); doc != nil {
		s := string(content)
		doc.pending, doc.pendingAfter = &s, doc.version
		return
	}
	if viaEditor {
		key := filepath.Clean(path)
		d.overlays[key] = overlay{content: append([]byte(nil), content...), disk: stampOf(key)}
	}
}

// waitVersion waits until the document key has a version above after (the
// editor confirmed an edit), is closed, or the wait is over. It reports
// whether the editor confirmed.
func (d *documents) waitVersion(ctx context.Context, key string, after int32, wait time.Duration) bool {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		d.mu.Lock()
		doc := d.byURI[key]
		var v int32
		if doc != nil {
			v = doc.version
		}
		ch := d.changed
		d.mu.Unlock()
		if doc == nil {
			return false
		}
		if v > after {
			return true
		}
		select {
		case <-ch:
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// Notification handlers.

func (s *server) didOpen(raw json.RawMessage) {
	var p didOpenParams
	if err := decodeStrict(raw, &p); err != nil || p.TextDocument.URI == "" {
		s.logf("lsp: didOpen: bad params (%v)", err)
		return
	}
	s.docs.open(&p)
}

func (s *server) didChange(raw json.RawMessage) { s.docs.change(raw) }

func (s *server) didClose(raw json.RawMessage) {
	var p didCloseParams
	if err := decodeParams(raw, &p); err != nil || p.TextDocument.URI == "" {
		s.logf("lsp: didClose: bad params (%v)", err)
		return
	}
	s.docs.close(p.TextDocument.URI)
}
