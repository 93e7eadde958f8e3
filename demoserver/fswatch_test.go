package demoserver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/clock"
)

// watchRig runs an fsWatch on a manual clock and records what it publishes.
type watchRig struct {
	t       *testing.T
	root    string
	clk     *clock.Manual
	w       *fsWatch
	changes []string
	reports []string
}

func newWatchRig(t *testing.T, root, state string) *watchRig {
	r := &watchRig{t: t, root: root, clk: clock.NewManual(time.Time{})}
	r.w = &fsWatch{files: files{root: root}, clk: r.clk, every: time.Second, publish: func(c fsChange) {
		b, _ := json.Marshal(c)
		r.changes = append(r.changes, string(b))
	}, report: func(err error) {
		r.reports = append(r.reports, errString(err))
	}}
	if state != "" {
		r.w.stateDir = state
	}
	return r
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

func (r *watchRig) write(name, data string) {
	r.t.Helper()
	p := filepath.Join(r.root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// expect advances a poll interval and checks what was published.
func (r *watchRig) expect(want ...string) {
	r.t.Helper()
	r.clk.Advance(time.Second)
	if strings.Join(r.changes, "\n") != strings.Join(want, "\n") {
		r.t.Fatalf("changes:\n%s\nwant:\n%s", strings.Join(r.changes, "\n"), strings.Join(want, "\n"))
	}
	r.changes = nil
}

func TestFSWatch(t *testing.T) {
	root := t.TempDir()
	r := newWatchRig(t, root, "")
	r.write("old.txt", "x")
	stop := r.w.start()
	r.expect() // the first scan is the baseline
	r.write("b.txt", "bb")
	r.write("a/c.md", "c")
	r.expect(`{"path":"a/c.md","change":"created","size":1}`, `{"path":"b.txt","change":"created","size":2}`)
	r.write("b.txt", "bbb")
	if err := os.Remove(filepath.Join(root, "old.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("b.txt", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	r.expect(`{"path":"b.txt","change":"changed","size":3}`, `{"path":"old.txt","change":"removed"}`)
	stop()
	r.write("while-stopped.txt", "s")
	r.expect() // not polling
	if r.clk.Pending() != 0 {
		t.Fatal("a stopped watch left its timer armed")
	}
	stop = r.w.start() // the first scan of a new run compares with the last one
	if len(r.changes) != 1 || r.changes[0] != `{"path":"while-stopped.txt","change":"created","size":1}` {
		t.Fatalf("at restart: %q", r.changes)
	}
	r.changes = nil
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	r.expect()
	r.write("back.txt", "")
	r.expect(`{"path":"a/c.md","change":"removed"}`, `{"path":"b.txt","change":"removed"}`, `{"path":"back.txt","change":"created","size":0}`, `{"path":"while-stopped.txt","change":"removed"}`)
	if len(r.reports) != 2 || !strings.Contains(r.reports[0], "root directory") || r.reports[1] != "ok" {
		t.Fatalf("reports %q", r.reports)
	}
	stop()
}

// TestFSWatchState: the last scan survives a restart in the state
// directory, so changes made while the server was down are reported.
func TestFSWatchState(t *testing.T) {
	root, state := t.TempDir(), t.TempDir()
	r := newWatchRig(t, root, state)
	r.write("a.txt", "a")
	stop := r.w.start()
	r.write("b.txt", "b")
	r.expect(`{"path":"b.txt","change":"created","size":1}`)
	stop()
	r.write("c.txt", "c")

	r2 := newWatchRig(t, root, state)
	stop = r2.w.start()
	defer stop()
	if len(r2.changes) != 1 || r2.changes[0] != `{"path":"c.txt","change":"created","size":1}` {
		t.Fatalf("after a restart: %q", r2.changes)
	}
}

// TestFSWatchStateNoSymlink: a symbolic link planted in the state
// directory in place of the snapshot is neither read nor written through.
func TestFSWatchStateNoSymlink(t *testing.T) {
	root, state, outside := t.TempDir(), t.TempDir(), t.TempDir()
	planted := filepath.Join(outside, "snap.json")
	const fake = `{"ghost.txt":{"size":1,"modTime":1,"mode":420}}`
	if err := os.WriteFile(planted, []byte(fake), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(planted, filepath.Join(state, snapshotFile)); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	r := newWatchRig(t, root, state)
	r.write("a.txt", "a")
	stop := r.w.start()
	defer stop()
	if len(r.changes) != 0 {
		t.Fatalf("the planted snapshot was read: %q", r.changes)
	}
	r.write("b.txt", "b")
	r.expect(`{"path":"b.txt","change":"created","size":1}`)
	if b, _ := os.ReadFile(planted); string(b) != fake {
		t.Fatalf("the snapshot was written through the link: %s", b)
	}
}

// TestFSWatchStaysInRoot: a symbolic link to a directory outside the root
// is not followed by the scan.
func TestFSWatchStaysInRoot(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	r := newWatchRig(t, root, "")
	stop := r.w.start()
	defer stop()
	if err := os.WriteFile(filepath.Join(outside, "x.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.write("in.txt", "i")
	r.expect(`{"path":"in.txt","change":"created","size":1}`)
}

func TestMatchFS(t *testing.T) {
	for _, tc := range []struct {
		args string
		yes  []string
		no   []string
	}{
		{`{}`, []string{"a.txt", "d/e/f.go"}, nil},
		{`{"glob":"*.txt"}`, []string{"a.txt", "d/b.txt"}, []string{"a.md", "d/a.txt.bak"}},
		{`{"dir":"d","glob":"*.txt"}`, []string{"d/b.txt", "d/e/c.txt"}, []string{"a.txt", "dd/b.txt"}},
		{`{"dir":"./d/","glob":"e/*.txt"}`, []string{"d/e/c.txt"}, []string{"d/b.txt", "d/e/f/c.txt"}},
	} {
		m, err := matchFS(json.RawMessage(tc.args))
		if err != nil {
			t.Fatalf("%s: %v", tc.args, err)
		}
		for _, p := range tc.yes {
			if !m(json.RawMessage(`{"path":"` + p + `","change":"created"}`)) {
				t.Errorf("%s: %s does not match", tc.args, p)
			}
		}
		for _, p := range tc.no {
			if m(json.RawMessage(`{"path":"` + p + `","change":"created"}`)) {
				t.Errorf("%s: %s matches", tc.args, p)
			}
		}
	}
	for _, bad := range []string{`{"dir":"../x"}`, `{"dir":"/etc"}`, `{"glob":"["}`, `{"dir":1}`} {
		if _, err := matchFS(json.RawMessage(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

func TestTicker(t *testing.T) {
	clk := clock.NewManual(time.Time{})
	var ticks []time.Time
	k := &ticker{clk: clk, publish: func(at time.Time) { ticks = append(ticks, at) }}
	clk.Advance(300 * time.Millisecond)
	stop := k.start()
	clk.Advance(3 * time.Second)
	stop()
	clk.Advance(3 * time.Second)
	if len(ticks) != 3 || !ticks[0].Equal(clock.Epoch.Add(time.Second)) || !ticks[2].Equal(clock.Epoch.Add(3*time.Second)) {
		t.Fatalf("ticks %v", ticks)
	}
	every2, err := matchTick(json.RawMessage(`{"seconds":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if every2(json.RawMessage(`{"unix":3}`)) || !every2(json.RawMessage(`{"unix":4}`)) {
		t.Fatal("seconds 2 does not keep the even seconds")
	}
	for _, bad := range []string{`{"seconds":0}`, `{"seconds":"x"}`} {
		if _, err := matchTick(json.RawMessage(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}
