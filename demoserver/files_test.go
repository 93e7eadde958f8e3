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

// TestReadFileSymlinkSwapRace swaps a directory of the root with a
// symbolic link to a directory outside it, over and over, while read_file
// reads a file below it: no read may ever return the outside file.
// (Resolving the links and then opening the resolved path by name returned
// the outside file whenever the swap fell between the two.)
func TestReadFileSymlinkSwapRace(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	for _, d := range []string{filepath.Join(root, "sub"), filepath.Join(dir, "outside")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(filepath.Join(root, "sub", "x.txt"), "inside")
	mustWrite(filepath.Join(dir, "outside", "x.txt"), "secret")
	if err := os.Symlink(filepath.Join(dir, "outside"), filepath.Join(dir, "probe")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	sub, kept := filepath.Join(root, "sub"), filepath.Join(root, ".kept")
	done := make(chan struct{})
	swapped := make(chan error, 1)
	go func() {
		var err error
		defer func() { swapped <- err }()
		for {
			select {
			case <-done:
				return
			default:
			}
			// sub becomes a link to the outside directory, then a directory again.
			if err = os.Rename(sub, kept); err != nil {
				return
			}
			if err = os.Symlink(filepath.Join(dir, "outside"), sub); err != nil {
				return
			}
			if err = os.Remove(sub); err != nil {
				return
			}
			if err = os.Rename(kept, sub); err != nil {
				return
			}
		}
	}()
	const reads = 20000
	f := files{root: root}
	var inside, leaked int
	for range reads {
		got, err := f.read("sub/x.txt")
		switch {
		case err == nil && got == "secret":
			leaked++
		case err == nil && got == "inside":
			inside++
		case err != nil && !strings.Contains(err.Error(), "outside the root") && !strings.Contains(err.Error(), "does not exist") &&
			!strings.Contains(err.Error(), "not a directory"): // the link vanished while being followed
			t.Errorf("read: unexpected error %v", err)
		}
	}
	close(done)
	if err := <-swapped; err != nil {
		t.Fatal(err)
	}
	if leaked > 0 {
		t.Fatalf("%d of %d reads returned the file outside the root (%d inside)", leaked, reads, inside)
	}
	if inside == 0 {
		t.Fatal("no read found the inside file: the swap never raced the reads")
	}
	t.Logf("%d reads while swapping: %d inside, 0 outside", reads, inside)
}
