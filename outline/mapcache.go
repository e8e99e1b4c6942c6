package outline

import (
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// cacheVersion changes whenever what the outline finds in a file changes,
// so that an old cache file is not trusted.
const cacheVersion = 1

// DefaultCacheFile is where the repo map of the workspace at root keeps its
// cache between processes: $XDG_CACHE_HOME/reika/repomap/<hash of root>.gob
// (os.UserCacheDir).
func DefaultCacheFile(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(dir, "reika", "repomap", hex.EncodeToString(sum[:8])+".gob"), nil
}

// SetCacheFile makes the map keep its per-file cache in the file at path
// too, so that another process (a new session) does not parse an unchanged
// tree again. The file is read at the next Render and written after a
// Render that parsed something; a missing, stale or broken file is just
// not used. Call it before the first Render.
func (m *RepoMap) SetCacheFile(path string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cacheFile = path
	m.cacheLoaded = false
}

// diskCache is the file's content.
type diskCache struct {
	Version    int
	TreeSitter bool // written by a build that parses (a build without cgo has no declarations)
	Root       string
	Files      []diskFile
}

type diskFile struct {
	Rel         string
	Mtime, Size int64
	Lang        string
	Skip        bool
	Refs        []uint64
	Decls       []diskDecl
}

type diskDecl struct {
	Sig   string
	Names []string
	Minor bool
}

// loadCacheLocked fills m.files from the cache file, once.
func (m *RepoMap) loadCacheLocked() {
	if m.cacheFile == "" || m.cacheLoaded {
		return
	}
	m.cacheLoaded = true
	f, err := os.Open(m.cacheFile)
	if err != nil {
		return
	}
	defer f.Close()
	var c diskCache
	if err := gob.NewDecoder(f).Decode(&c); err != nil || c.Version != cacheVersion || c.TreeSitter != treeSitter() || c.Root != m.absRoot() {
		return
	}
	for _, df := range c.Files {
		if m.files[df.Rel] != nil {
			continue
		}
		mf := &mapFile{mtime: df.Mtime, size: df.Size, lang: df.Lang, skip: df.Skip, refs: df.Refs}
		for _, d := range df.Decls {
			mf.decls = append(mf.decls, mapDecl{sig: d.Sig, names: d.Names, minor: d.Minor})
		}
		m.files[df.Rel] = mf
	}
}

// saveCacheLocked writes m.files to the cache file (through a temporary
// file and a rename, so a reader never sees half a file).
func (m *RepoMap) saveCacheLocked(rels []string) error {
	if m.cacheFile == "" {
		return nil
	}
	c := diskCache{Version: cacheVersion, TreeSitter: hasTreeSitter, Root: m.absRoot(), Files: make([]diskFile, 0, len(m.files))}
	for _, rel := range rels {
		mf := m.files[rel]
		df := diskFile{Rel: rel, Mtime: mf.mtime, Size: mf.size, Lang: mf.lang, Skip: mf.skip, Refs: mf.refs}
		for _, d := range mf.decls {
			df.Decls = append(df.Decls, diskDecl{Sig: d.sig, Names: d.names, Minor: d.minor})
		}
		c.Files = append(c.Files, df)
	}
	if err := os.MkdirAll(filepath.Dir(m.cacheFile), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(m.cacheFile), ".repomap-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := gob.NewEncoder(tmp).Encode(&c); err != nil {
		tmp.Close()
		return fmt.Errorf("repo map cache: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), m.cacheFile)
}

func (m *RepoMap) absRoot() string {
	abs, err := filepath.Abs(m.root)
	if err != nil {
		return m.root
	}
	return abs
}

// treeSitter reports whether this build parses with tree-sitter (cgo): a
// cache written by the other kind of build is not used.
func treeSitter() bool { return hasTreeSitter }
