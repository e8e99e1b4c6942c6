package outline

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/reika-lsp/reika-lsp/internal/atomicfile"
)

// The repo map's cache on disk, so that a new process (a new session, the
// next `reika-lsp repomap`) neither parses an unchanged tree nor ranks it
// again. Under the cache directory each workspace has a directory of its
// own, named by a hash of its absolute root:
//
//	<dir>/<hash>/root      the workspace's root, to prune the directory once the root is gone
//	<dir>/<hash>/outlines  each file's declarations and references, keyed by path, mtime and size
//	<dir>/<hash>/maps      the last keepMaps rendered maps, keyed by mapKey
//
// Every file is replaced whole through a temporary file and a rename
// (internal/atomicfile), so a reader sees an old file or a new one, never
// half of one; two processes writing at once each write a whole file and
// the last rename wins, which costs the other only its entry. Every file
// starts with a magic line naming the format and a SHA-256 of the rest: a
// truncated, corrupt or foreign file fails the check, is ignored as if it
// were missing, and is rewritten by the next Render that computes what it
// holds. The size is bounded: one outlines file per workspace (at most
// maxMapFiles entries), keepMaps maps per workspace, and pruneCache keeps
// the directories of at most keepWorkspaces workspaces whose root still
// exists and that were used in the last maxIdle.

// cacheVersion changes whenever what the outline finds in a file or the
// format of the cache files changes, so that an old cache file is not
// trusted.
const cacheVersion = 3

// cacheMagic starts every cache file.
var cacheMagic = fmt.Appendf(nil, "reika repo map cache %d\n", cacheVersion)

// DefaultCacheDir is where repo maps keep their caches between processes:
// reika/repomap in the user's cache directory (os.UserCacheDir:
// $XDG_CACHE_HOME, else ~/.cache, on Linux).
func DefaultCacheDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "reika", "repomap"), nil
}

// SetCacheDir makes the map keep its cache under dir (see DefaultCacheDir)
// too, so that another process (a new session) neither parses nor ranks an
// unchanged tree again; "" keeps it in memory only. The cache is read at
// the next Render and written after a Render that computed something; a
// missing, stale or broken file is just not used. Call it before the first
// Render.
func (m *RepoMap) SetCacheDir(dir string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cacheDir = ""
	if dir != "" {
		sum := sha256.Sum256([]byte(m.absRoot()))
		m.cacheDir = filepath.Join(dir, hex.EncodeToString(sum[:8]))
	}
	m.cacheLoaded = false
	m.maps = nil
}

// diskCache is the content of the outlines file.
type diskCache struct {
	TreeSitter bool // written by a build that parses (a build without cgo has no declarations)
	Root       string
	Files      []diskFile
}

type diskFile struct {
	Rel         string
	Mtime, Size int64
	Lang        string
	Skip        bool
	Refs        []byte // the refs, 8 bytes each, little-endian: gob copies bytes far faster than it encodes numbers
	Decls       []diskDecl
}

type diskDecl struct {
	Sig   string
	Names []string
	Minor bool
}

// loadCacheLocked fills m.files from the outlines file, once.
func (m *RepoMap) loadCacheLocked() {
	if m.cacheDir == "" || m.cacheLoaded {
		return
	}
	m.cacheLoaded = true
	var c diskCache
	if err := readSealed(filepath.Join(m.cacheDir, "outlines"), &c); err != nil || c.TreeSitter != hasTreeSitter || c.Root != m.absRoot() {
		return
	}
	for _, df := range c.Files {
		if m.files[df.Rel] != nil {
			continue
		}
		if len(df.Refs)%8 != 0 {
			continue
		}
		mf := &mapFile{mtime: df.Mtime, size: df.Size, lang: df.Lang, skip: df.Skip, refs: make([]uint64, len(df.Refs)/8)}
		for i := range mf.refs {
			mf.refs[i] = binary.LittleEndian.Uint64(df.Refs[8*i:])
		}
		for _, d := range df.Decls {
			mf.decls = append(mf.decls, mapDecl{sig: d.Sig, names: d.Names, minor: d.Minor})
		}
		m.files[df.Rel] = mf
	}
}

// saveCacheLocked writes the entries of rels to the outlines file but for
// the files modified after racy (UnixNano): a file changed again within
// the file system's timestamp granularity would keep its time and size, so
// its entry is not trusted beyond this process.
func (m *RepoMap) saveCacheLocked(rels []string, racy int64) error {
	if m.cacheDir == "" {
		return nil
	}
	c := diskCache{TreeSitter: hasTreeSitter, Root: m.absRoot(), Files: make([]diskFile, 0, len(rels))}
	for _, rel := range rels {
		mf := m.files[rel]
		if mf.mtime > racy {
			continue
		}
		df := diskFile{Rel: rel, Mtime: mf.mtime, Size: mf.size, Lang: mf.lang, Skip: mf.skip, Refs: make([]byte, 0, 8*len(mf.refs))}
		for _, r := range mf.refs {
			df.Refs = binary.LittleEndian.AppendUint64(df.Refs, r)
		}
		for _, d := range mf.decls {
			df.Decls = append(df.Decls, diskDecl{Sig: d.sig, Names: d.names, Minor: d.minor})
		}
		c.Files = append(c.Files, df)
	}
	if err := m.writeRoot(); err != nil {
		return err
	}
	return writeSealed(filepath.Join(m.cacheDir, "outlines"), &c)
}

// writeRoot writes the root file of the workspace's cache directory, unless
// it is there.
func (m *RepoMap) writeRoot() error {
	p := filepath.Join(m.cacheDir, "root")
	if b, err := os.ReadFile(p); err == nil && string(b) == m.absRoot() {
		return nil
	}
	return atomicfile.Write(p, []byte(m.absRoot()))
}

// writeSealed writes v to path as a gob after the magic line and the
// SHA-256 of the gob.
func writeSealed(path string, v any) error {
	var gobbed bytes.Buffer
	if err := gob.NewEncoder(&gobbed).Encode(v); err != nil {
		return fmt.Errorf("repo map cache: %w", err)
	}
	sum := sha256.Sum256(gobbed.Bytes())
	out := make([]byte, 0, len(cacheMagic)+len(sum)+gobbed.Len())
	out = append(append(append(out, cacheMagic...), sum[:]...), gobbed.Bytes()...)
	return atomicfile.Write(path, out)
}

// errBadCache is a cache file that fails its check.
var errBadCache = errors.New("repo map cache: not a cache file of this version, or damaged")

// readSealed reads what writeSealed wrote into v.
func readSealed(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	body, ok := bytes.CutPrefix(data, cacheMagic)
	if !ok || len(body) < sha256.Size {
		return errBadCache
	}
	sum, gobbed := body[:sha256.Size], body[sha256.Size:]
	if want := sha256.Sum256(gobbed); !bytes.Equal(sum, want[:]) {
		return errBadCache
	}
	return gob.NewDecoder(bytes.NewReader(gobbed)).Decode(v)
}

func (m *RepoMap) absRoot() string {
	abs, err := filepath.Abs(m.root)
	if err != nil {
		return m.root
	}
	return abs
}
