package demoserver

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// confinementTree builds:
//
//	dir/outside/secret.txt
//	dir/root/hello.txt, sub/inner.txt, big.txt (> MaxFileSize), bad.bin (not UTF-8)
//	dir/root/escape    -> dir/outside/secret.txt
//	dir/root/escdir    -> dir/outside
//	dir/root/inlink    -> hello.txt
//	dir/rootlink       -> dir/root
func confinementTree(t *testing.T) (dir, root string) {
	t.Helper()
	dir = t.TempDir()
	root = filepath.Join(dir, "root")
	write := func(path string, data []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, path string) {
		t.Helper()
		if err := os.Symlink(target, path); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}
	write(filepath.Join(dir, "outside", "secret.txt"), []byte("secret"))
	write(filepath.Join(root, "hello.txt"), []byte("hello\n"))
	write(filepath.Join(root, "sub", "inner.txt"), []byte("inner"))
	write(filepath.Join(root, "big.txt"), []byte(strings.Repeat("y", MaxFileSize+1)))
	write(filepath.Join(root, "bad.bin"), []byte{0xff, 0xfe, 0x00})
	link(filepath.Join(dir, "outside", "secret.txt"), filepath.Join(root, "escape"))
	link(filepath.Join(dir, "outside"), filepath.Join(root, "escdir"))
	link("hello.txt", filepath.Join(root, "inlink"))
	link(root, filepath.Join(dir, "rootlink"))
	return dir, root
}

func TestReadFileConfinement(t *testing.T) {
	dir, root := confinementTree(t)
	for _, r := range []string{root, filepath.Join(dir, "rootlink")} {
		f := files{root: r}
		for _, ok := range []struct{ path, want string }{
			{"hello.txt", "hello\n"},
			{"./hello.txt", "hello\n"},
			{"sub/inner.txt", "inner"},
			{"sub/../hello.txt", "hello\n"},
			{"inlink", "hello\n"},
		} {
			got, err := f.read(ok.path)
			if err != nil || got != ok.want {
				t.Errorf("root %s: read(%q) = %q, %v; want %q", r, ok.path, got, err, ok.want)
			}
		}
		for _, bad := range []struct{ path, why string }{
			{filepath.Join(root, "hello.txt"), "absolute"},
			{"/etc/passwd", "absolute"},
			{"../outside/secret.txt", "leaves the root"},
			{"sub/../../outside/secret.txt", "leaves the root"},
			{"..", "leaves the root"},
			{"escape", "outside the root"},
			{"escdir/secret.txt", "outside the root"},
			{"sub", "not a regular file"},
			{".", "not a regular file"},
			{"big.txt", "the limit is"},
			{"bad.bin", "not UTF-8"},
			{"missing.txt", "does not exist"},
			{"", "empty"},
		} {
			got, err := f.read(bad.path)
			if err == nil || !strings.Contains(err.Error(), bad.why) {
				t.Errorf("root %s: read(%q) = %q, %v; want an error about %q", r, bad.path, got, err, bad.why)
			}
		}
	}
}

func TestListFiles(t *testing.T) {
	_, root := confinementTree(t)
	names, err := files{root: root}.list()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"bad.bin", "big.txt", "escape", "escdir", "hello.txt", "inlink", "sub"}
	if !slices.Equal(names, want) {
		t.Fatalf("list = %v, want %v", names, want)
	}
	if _, err := (files{root: filepath.Join(root, "nope")}).list(); err == nil {
		t.Fatal("listing a missing root succeeded")
	}
}

func TestDefaultRootIsWorkingDirectory(t *testing.T) {
	_, root := confinementTree(t)
	t.Chdir(root)
	if got, err := (files{}).read("hello.txt"); err != nil || got != "hello\n" {
		t.Fatalf("read = %q, %v", got, err)
	}
}
