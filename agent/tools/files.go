package tools

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/reika-lsp/reika-lsp/internal/atomicfile"
	"github.com/reika-lsp/reika-lsp/internal/regular"
	"github.com/reika-lsp/reika-lsp/internal/walk"
)

// DiskFiles is Files on the local disk, for front ends without an editor
// (`reika-lsp run`) and for tests. Writes are atomic: a temp file in the
// same directory renamed over the target, keeping its permissions.
type DiskFiles struct{}

// ReadFile implements Files. Only a regular file is read (package regular).
func (DiskFiles) ReadFile(path string) ([]byte, error) { return regular.Read(path) }

// OverlaidPaths implements OverlaidFiles: none, every read is the disk's.
func (DiskFiles) OverlaidPaths() []string { return nil }

// WriteFile implements Files: atomically, keeping the file's mode.
func (DiskFiles) WriteFile(ctx context.Context, path string, content []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return atomicfile.Write(path, content)
}

func (env *Env) files() Files {
	if env.Files == nil {
		return DiskFiles{}
	}
	return env.Files
}

// isBinary reports whether data looks binary: a NUL byte in its first 8000
// bytes, as git decides.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0
}

// walkFiles calls fn for each regular file under base (a directory, or a
// single file) that git would not ignore, in lexical order. name is how
// results print the file: workspace-relative inside the workspace, absolute
// elsewhere; rel is its path relative to base. Symlinks are not followed.
// A base inside the workspace is walked from the root so that the
// .gitignore files above it apply; a base that is itself ignored was asked
// for by name and is walked with only the .gitignore files inside it.
func (env *Env) walkFiles(ctx context.Context, base place, fn func(name, rel, abs string) error) error {
	fi, err := os.Stat(base.Abs)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		if err := notSpecial(base); err != nil {
			return err
		}
		return fn(base.Rel, filepath.Base(base.Abs), base.Abs)
	}
	root := env.root()
	if base.Inside && !walk.NewMatcher(root).Ignored(base.Rel, true) {
		prefix := ""
		if base.Rel != "." {
			prefix = base.Rel + "/"
		}
		return walk.Walk(root, func(rel string, d fs.DirEntry) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if !strings.HasPrefix(rel, prefix) {
				if d.IsDir() && strings.HasPrefix(prefix, rel+"/") {
					return nil // an ancestor of base: go down
				}
				if d.IsDir() {
					return walk.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			return fn(rel, rel[len(prefix):], filepath.Join(root, filepath.FromSlash(rel)))
		})
	}
	return walk.Walk(base.Abs, func(rel string, d fs.DirEntry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		name := base.Rel + "/" + rel
		if base.Rel == "." {
			name = rel
		}
		return fn(name, rel, filepath.Join(base.Abs, filepath.FromSlash(rel)))
	})
}
