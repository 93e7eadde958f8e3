package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/clock"
)

// TestResultStoreBounded: saved results stay under the size cap (oldest
// removed first) and the age cap, each path is new, the directory is
// private and outlives the store.
func TestResultStoreBounded(t *testing.T) {
	clk := clock.NewManual(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	dir := filepath.Join(t.TempDir(), "results")
	s := newResultStore(Options{ResultDir: dir, ResultsMaxBytes: 1000, ResultsMaxAge: time.Hour}, clk)
	// A file the store did not write is never removed.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte(strings.Repeat("n", 2000)), 0o600); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	save := func(n int) string {
		t.Helper()
		p, err := s.save([]byte(strings.Repeat("x", n)))
		if err != nil {
			t.Fatal(err)
		}
		if seen[p] {
			t.Fatalf("path %s handed out twice", p)
		}
		seen[p] = true
		now := clk.Now()
		if err := os.Chtimes(p, now, now); err != nil { // the file's age on the store's clock
			t.Fatal(err)
		}
		clk.Advance(time.Minute)
		return p
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	a, b, c := save(300), save(300), save(300)
	if !exists(a) || !exists(b) || !exists(c) {
		t.Fatal("a file was removed under the cap")
	}
	d := save(300) // 1200 > 1000: the oldest goes
	if exists(a) || !exists(b) || !exists(c) || !exists(d) {
		t.Fatalf("after the 4th file: a %v b %v c %v d %v, want only a removed", exists(a), exists(b), exists(c), exists(d))
	}
	e := save(700) // needs b and c gone
	if exists(b) || exists(c) || !exists(d) || !exists(e) {
		t.Fatalf("after a 700-byte file: b %v c %v d %v e %v", exists(b), exists(c), exists(d), exists(e))
	}
	clk.Advance(time.Hour)
	f := save(10) // d and e are past the age cap
	if exists(d) || exists(e) || !exists(f) {
		t.Fatalf("after an hour: d %v e %v f %v", exists(d), exists(e), exists(f))
	}
	if !exists(filepath.Join(dir, "notes.txt")) {
		t.Fatal("a foreign file was removed")
	}
	if _, err := s.save(make([]byte, 1001)); err == nil || !strings.Contains(err.Error(), "over the 1000-byte cap") {
		t.Fatalf("a result over the cap: %v", err)
	}
	st, err := os.Stat(dir)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("directory mode: %v %v (a directory found 0755 is made private)", st, err)
	}
	fst, err := os.Stat(f)
	if err != nil || fst.Mode().Perm() != 0o600 {
		t.Fatalf("file mode: %v %v", fst, err)
	}
	// Many saves: every path new, the total stays capped.
	for range 50 {
		save(100)
	}
	entries, _ := os.ReadDir(dir)
	var total int64
	var names []string
	for _, en := range entries {
		if strings.HasPrefix(en.Name(), resultPrefix) {
			info, _ := en.Info()
			total += info.Size()
			names = append(names, en.Name())
		}
	}
	if total > 1000 || len(names) != 10 || len(seen) != 56 {
		t.Fatalf("after 50 more saves: %d bytes in %d files (%d paths handed out)", total, len(names), len(seen))
	}
}

// TestResultDirRefusedWhenNotPrivate: the default directory is not
// followed through a symbolic link, and a file in its place is refused.
func TestResultDirRefusedWhenNotPrivate(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", cache)
	want := filepath.Join(cache, "mcprt", "results")
	if got := DefaultResultDir(); got != want {
		t.Skipf("the default directory is %s here (not under XDG_CACHE_HOME)", got)
	}
	if err := os.MkdirAll(filepath.Dir(want), 0o700); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, want); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	s := newResultStore(Options{}, clock.NewManual(clock.Epoch))
	if _, err := s.save([]byte("{}")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("saving through a symlinked default directory: %v", err)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Fatalf("a file was written through the link: %v", entries)
	}
	if err := os.Remove(want); err != nil {
		t.Fatal(err)
	}
	p, err := s.save([]byte("{}"))
	if err != nil || filepath.Dir(p) != want {
		t.Fatalf("save = %s, %v; want a file in %s", p, err, want)
	}
}
