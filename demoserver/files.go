package demoserver

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"
)

// MaxFileSize is the largest file read_file returns, in bytes.
const MaxFileSize = 1 << 20

// files confines read_file, list_files and the fs.changed scan to one root
// directory. Every access goes through an [os.Root] opened on it, so no
// path, symbolic link or ".." can reach outside the root, even while the
// tree changes under the server (a symlink swapped between a check and the
// open is resolved by the kernel inside the root, never by name twice).
// Symbolic links inside the tree are followed only while they stay in the
// root; absolute links are refused.
type files struct {
	root string // as configured; empty means the current directory
}

// open opens the root directory.
func (f files) open() (*os.Root, error) {
	root := f.root
	if root == "" {
		root = "."
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("root directory: %w", err)
	}
	return r, nil
}

// resolvedRoot returns the root as an absolute path with symlinks resolved.
// It names the root (to find the state directory inside it); it is never
// used to open a file.
func (f files) resolvedRoot() (string, error) {
	root := f.root
	if root == "" {
		root = "."
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("root directory: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("root directory: %w", err)
	}
	return real, nil
}

// clean checks a client-supplied path and returns it cleaned, relative to
// the root.
func clean(name string) (string, error) {
	if name == "" {
		return "", errors.New("path is empty")
	}
	if filepath.IsAbs(name) || strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) || filepath.VolumeName(name) != "" {
		return "", fmt.Errorf("%q is absolute: give a path relative to the root directory", name)
	}
	c := filepath.Clean(name)
	if c == ".." || strings.HasPrefix(c, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%q leaves the root directory", name)
	}
	return c, nil
}

// escapes reports whether err is os.Root's refusal of a path that leads
// outside it (the error itself is not exported).
func escapes(err error) bool {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err != nil && strings.Contains(err.Error(), "escapes")
}

// read returns the text of the file name, relative to the root.
func (f files) read(name string) (string, error) {
	c, err := clean(name)
	if err != nil {
		return "", err
	}
	root, err := f.open()
	if err != nil {
		return "", err
	}
	defer root.Close()
	// O_NONBLOCK: opening a FIFO must not wait for a writer; the file is
	// then refused as not regular.
	file, err := root.OpenFile(c, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	switch {
	case err == nil:
	case errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("%q does not exist", name)
	case escapes(err):
		return "", fmt.Errorf("%q resolves outside the root directory", name)
	default:
		return "", fmt.Errorf("%q: %w", name, unwrapPath(err))
	}
	defer file.Close()
	info, err := file.Stat() // the opened file itself: no second lookup by name
	if err != nil {
		return "", fmt.Errorf("%q: %w", name, unwrapPath(err))
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("%q is not a regular file", name)
	}
	if info.Size() > MaxFileSize {
		return "", fmt.Errorf("%q is %d bytes; the limit is %d", name, info.Size(), MaxFileSize)
	}
	data, err := io.ReadAll(io.LimitReader(file, MaxFileSize+1))
	if err != nil {
		return "", fmt.Errorf("%q: %w", name, unwrapPath(err))
	}
	if len(data) > MaxFileSize {
		return "", fmt.Errorf("%q is larger than %d bytes", name, MaxFileSize)
	}
	if !utf8.Valid(data) {
		return "", fmt.Errorf("%q is not UTF-8 text", name)
	}
	return string(data), nil
}

// unwrapPath drops a PathError's absolute path (the client gave its own).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// list returns the sorted names in the root directory.
func (f files) list() ([]string, error) {
	root, err := f.open()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	dir, err := root.Open(".")
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}
