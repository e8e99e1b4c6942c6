//go:build unix

package outline

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// lockMaps holds an exclusive flock on the cache directory's maps.lock
// while a process reads, merges and writes its maps file, so that two
// processes adding a map at once both keep theirs (without it the last
// writer dropped the other's entry). The returned func releases it; when
// the lock cannot be had the write goes ahead unlocked (the cache is an
// optimisation: a lost entry costs one ranking).
func lockMaps(dir string) func() {
	f, err := os.OpenFile(filepath.Join(dir, "maps.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return func() {}
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return func() {}
	}
	return func() { f.Close() }
}
