package demoserver

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// MaxFileSize is the largest file read_file returns, in bytes.
const MaxFileSize = 1 << 20

// files confines read_file and list_files to one root directory.
type files struct {
	root string // as configured; empty means the current directory
}

// resolvedRoot returns the root as an absolute path with symlinks resolved.
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

// within reports whether path is root itself or lies below it.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// resolve maps a client-supplied relative path to a real path inside the root.
func (f files) resolve(name string) (string, error) {
	if name == "" {
		return "", errors.New("path is empty")
	}
	if filepath.IsAbs(name) || strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) || filepath.VolumeName(name) != "" {
		return "", fmt.Errorf("%q is absolute: give a path relative to the root directory", name)
	}
	clean := filepath.Clean(name)
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%q leaves the root directory", name)
	}
	root, err := f.resolvedRoot()
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(filepath.Join(root, clean))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%q does not exist", name)
		}
		return "", fmt.Errorf("%q: %w", name, err)
	}
	if !within(root, real) {
		return "", fmt.Errorf("%q resolves outside the root directory", name)
	}
	return real, nil
}

// read returns the text of the file name, relative to the root.
func (f files) read(name string) (string, error) {
	real, err := f.resolve(name)
	if err != nil {
		return "", err
	}
	info, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("%q: %w", name, err)
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("%q is not a regular file", name)
	}
	if info.Size() > MaxFileSize {
		return "", fmt.Errorf("%q is %d bytes; the limit is %d", name, info.Size(), MaxFileSize)
	}
	file, err := os.Open(real)
	if err != nil {
		return "", fmt.Errorf("%q: %w", name, err)
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, MaxFileSize+1))
	if err != nil {
		return "", fmt.Errorf("%q: %w", name, err)
	}
	if len(data) > MaxFileSize {
		return "", fmt.Errorf("%q is larger than %d bytes", name, MaxFileSize)
	}
	if !utf8.Valid(data) {
		return "", fmt.Errorf("%q is not UTF-8 text", name)
	}
	return string(data), nil
}

// list returns the sorted names in the root directory.
func (f files) list() ([]string, error) {
	root, err := f.resolvedRoot()
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names, nil
}
