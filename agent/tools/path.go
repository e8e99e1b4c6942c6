package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/reika-lsp/reika-lsp/agent/approval"
	"github.com/reika-lsp/reika-lsp/internal/regular"
)

// place is a path a tool was given, resolved.
type place struct {
	// Abs is the absolute path with every symlink resolved, including those
	// of a new file's existing ancestors. Tools access Abs, never the path
	// as given, so what is checked is what is touched.
	Abs string
	// Rel is how results name it: slash-separated and workspace-relative
	// inside the workspace ("." for the root), Abs elsewhere.
	Rel string
	// Inside is true within the workspace root; Temp within Env.TempDir.
	Inside, Temp bool
}

// resolve resolves p (relative to the workspace root, or absolute; "~/" is
// the home directory and a file:// prefix is dropped). It does not ask for
// approval: see allowRead and approveChange.
func (env *Env) resolve(p string) (place, error) {
	p = unlistName(strings.TrimSpace(p))
	p = strings.TrimPrefix(p, "file://")
	if p == "" {
		return place{}, errors.New("path is empty")
	}
	if strings.ContainsRune(p, 0) {
		return place{}, errors.New("path contains a NUL byte")
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	root := env.root()
	abs := filepath.FromSlash(p)
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, abs)
	}
	real, err := realPath(filepath.Clean(abs))
	if err != nil {
		return place{}, fmt.Errorf("cannot resolve %s: %w", p, err)
	}
	pl := place{Abs: real, Rel: real}
	if within(real, root) {
		pl.Inside = true
		rel, _ := filepath.Rel(root, real)
		pl.Rel = filepath.ToSlash(rel)
	} else if t := env.tempDir(); t != "" && within(real, t) {
		pl.Temp = true
	}
	return pl, nil
}

// root is the workspace root with symlinks resolved.
func (env *Env) root() string {
	r := filepath.Clean(env.Root)
	if real, err := filepath.EvalSymlinks(r); err == nil {
		return real
	}
	return r
}

// tempDir is Env.TempDir with symlinks resolved, or "".
func (env *Env) tempDir() string {
	if env.TempDir == "" {
		return ""
	}
	t, err := filepath.Abs(env.TempDir)
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(t); err == nil {
		return real
	}
	return t
}

// allowRead lets a read-only tool look at pl: anything in the workspace or
// the temp dir, elsewhere only with the user's approval (Kind "outside").
func (env *Env) allowRead(ctx context.Context, tool string, pl place) error {
	if pl.Inside || pl.Temp {
		return nil
	}
	return env.allowOutside(ctx, tool, pl)
}

// allowWrite lets write or edit touch pl: anything in the workspace,
// elsewhere (the temp dir included) only with the user's approval. It is
// asked before the file is even read; the change itself is approved
// separately (approveChange).
func (env *Env) allowWrite(ctx context.Context, tool string, pl place) error {
	if pl.Inside {
		return nil
	}
	return env.allowOutside(ctx, tool, pl)
}

func (env *Env) allowOutside(ctx context.Context, tool string, pl place) error {
	ok := env.approve(ctx, approval.Request{
		Tool:    tool,
		Kind:    "outside",
		Summary: fmt.Sprintf("%s %s (outside the workspace)", tool, pl.Abs),
		Detail:  pl.Abs,
	})
	if !ok {
		return fmt.Errorf("%s is outside the workspace and access was denied by the user", pl.Abs)
	}
	return nil
}

// approveChange asks before write or edit changes the file pl (Kind
// "edit"); detail is the diff the user approves. A file of a version-control
// directory needs what a command needs (Kind "command"): what is written
// there can run commands (git's core.fsmonitor, hooks), at the next git
// status an editor runs by itself.
func (env *Env) approveChange(ctx context.Context, tool string, pl place, summary, detail string) error {
	kind := "edit"
	if d := vcsControl(pl); d != "" {
		kind = "command"
		summary += fmt.Sprintf(" (in %s, a version-control directory: what is written there can run commands)", d)
		if len(detail) > approval.TextBytes && env.wouldAsk(kind) {
			return fmt.Errorf("%s: the change is %d bytes, longer than the %d an approval can show whole", summary, len(detail), approval.TextBytes)
		}
	}
	if !env.approve(ctx, approval.Request{Tool: tool, Kind: kind, Summary: summary, Detail: detail}) {
		return fmt.Errorf("%s: denied by the user", summary)
	}
	return nil
}

// vcsNames are the control directories (and files) of version-control
// systems, whose content configures commands those systems run.
var vcsNames = []string{".git", ".hg", ".svn", ".bzr", "_darcs", ".jj", ".pijul", ".fslckout", "_FOSSIL_"}

// vcsControl names the version-control directory pl is in (or is), ""
// when none. Names match whatever their case, as on case-insensitive file
// systems.
func vcsControl(pl place) string {
	p := pl.Rel
	if !pl.Inside {
		p = filepath.ToSlash(pl.Abs)
	}
	for part := range strings.SplitSeq(p, "/") {
		for _, d := range vcsNames {
			if strings.EqualFold(part, d) {
				return part
			}
		}
	}
	return ""
}

// notSpecial refuses a path that exists and is neither a regular file nor
// a directory: a FIFO (whose read blocks until a writer comes), a device, a
// socket. No file tool opens one.
func notSpecial(pl place) error {
	fi, err := os.Stat(pl.Abs)
	if err != nil || fi.Mode().IsRegular() || fi.IsDir() {
		return nil
	}
	return fmt.Errorf("%s is %s, not a regular file; the file tools read and write regular files only", pl.Rel, regular.Kind(fi.Mode()))
}

// approve asks Env.Approve; no approver means no.
func (env *Env) approve(ctx context.Context, a approval.Request) bool {
	if env.Approve == nil {
		return false
	}
	return env.Approve(ctx, a)
}

// wouldAsk reports whether a call of kind would be put to the user.
func (env *Env) wouldAsk(kind string) bool {
	return env.WouldAsk == nil || env.WouldAsk(kind)
}

// within reports whether p is dir or below it (both clean and absolute).
func within(p, dir string) bool {
	if p == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(p, dir)
}

// realPath resolves every symlink of the absolute, clean path p. Components
// that do not exist yet are kept as they are; a dangling symlink is followed
// to where it points (so a new file written through it is checked where it
// would really land).
func realPath(p string) (string, error) {
	for range 64 {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r, nil
		}
		dir, rest := p, ""
		for {
			fi, err := os.Lstat(dir)
			if err == nil {
				if fi.Mode()&os.ModeSymlink == 0 {
					r, err := filepath.EvalSymlinks(dir)
					if err != nil {
						return "", err
					}
					return filepath.Join(r, rest), nil
				}
				// A symlink EvalSymlinks could not follow: dangling or a
				// loop. Take one step and try again.
				target, err := os.Readlink(dir)
				if err != nil {
					return "", err
				}
				if !filepath.IsAbs(target) {
					parent, err := filepath.EvalSymlinks(filepath.Dir(dir))
					if err != nil {
						return "", err
					}
					target = filepath.Join(parent, target)
				}
				p = filepath.Join(target, rest)
				break
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				return p, nil
			}
			rest = filepath.Join(filepath.Base(dir), rest)
			dir = parent
		}
	}
	return "", errors.New("too many levels of symbolic links")
}

// placeName names pl in a sentence: "the workspace" for its root.
func placeName(pl place) string {
	if pl.Inside && pl.Rel == "." {
		return "the workspace"
	}
	return pl.Rel
}
