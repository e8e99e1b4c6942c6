// Package regular opens and reads regular files only. Anything else (a FIFO,
// whose read blocks until a writer comes, a device, a socket) is an error,
// found without blocking: the file is opened non-blocking and looked at
// before it is read. The file tools and the language server's disk fallback
// read through it.
package regular

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Read reads a regular file.
func Read(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Open opens a regular file for reading, refusing anything else without
// blocking on it. A directory is refused with "is a directory".
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		if fi.IsDir() {
			return nil, &fs.PathError{Op: "read", Path: path, Err: errors.New("is a directory")}
		}
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("is %s, not a regular file", Kind(fi.Mode()))}
	}
	return f, nil
}

// Kind names the kind of a file that is neither regular nor a directory:
// "a named pipe (FIFO)", "a socket", "a character device", "a device", or
// "a special file".
func Kind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}
