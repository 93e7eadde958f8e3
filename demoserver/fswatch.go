package demoserver

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcprt/mcprt/clock"
)

// MaxWatched bounds how many files one fs.changed scan looks at; the rest
// of the tree is not watched.
const MaxWatched = 10000

// snapshotFile names the file in the state directory that keeps the last
// scan, so that a restarted server reports what changed while it was down.
const snapshotFile = "fs-snapshot.json"

// fileState is what a scan remembers of a file.
type fileState struct {
	Size    int64  `json:"size"`
	ModTime int64  `json:"modTime"` // Unix nanoseconds
	Mode    uint32 `json:"mode"`
}

// fsChange is the data of one fs.changed occurrence.
type fsChange struct {
	// Path is the file's path relative to the root, with forward slashes.
	Path string `json:"path"`
	// Change is "created", "changed" or "removed".
	Change string `json:"change"`
	// Size is the file's size in bytes (not for "removed").
	Size *int64 `json:"size,omitempty"`
}

// fsWatch polls the root directory for fs.changed: every scan is compared
// with the previous one, and each difference is published, in path order.
// It polls only while it runs (while fs.changed has streams); the first
// scan of a run compares with the last scan before it (the state
// directory's, after a restart), so changes made meanwhile are published
// then, before the opening stream takes its position.
type fsWatch struct {
	files    files
	clk      clock.Clock
	every    time.Duration
	stateDir string // the state directory keeping the snapshot file, or ""
	skip     string // the state directory's real path (not scanned when inside the root), or ""
	publish  func(fsChange)
	report   func(error) // a scan failed (nil: it works again)

	mu      sync.Mutex
	snap    map[string]fileState // the last scan; nil before the first; guarded by mu
	running bool                 // guarded by mu
	timer   clock.Timer          // guarded by mu
	failing string               // the last scan's error, or ""; guarded by mu
}

// start scans now, then every w.every until the returned stop is called.
func (w *fsWatch) start() (stop func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.running = true
	if w.snap == nil {
		w.load()
	}
	w.scanLocked()
	w.armLocked()
	return w.stop
}

func (w *fsWatch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.running = false
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
}

func (w *fsWatch) armLocked() {
	w.timer = w.clk.AfterFunc(w.every, w.poll)
}

// poll is the timer's callback.
func (w *fsWatch) poll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.running {
		return
	}
	w.scanLocked()
	w.armLocked()
}

// scanLocked scans, publishes the differences and keeps the new snapshot.
func (w *fsWatch) scanLocked() {
	now, err := w.scan()
	if err != nil {
		if msg := err.Error(); msg != w.failing {
			w.failing = msg
			w.report(err)
		}
		return
	}
	if w.failing != "" {
		w.failing = ""
		w.report(nil)
	}
	if w.snap == nil { // the first scan ever: the baseline
		w.snap = now
		w.save()
		return
	}
	changes := diff(w.snap, now)
	w.snap = now
	for _, c := range changes {
		w.publish(c)
	}
	if len(changes) > 0 {
		w.save()
	}
}

// scan walks the root through an [os.Root] (not following symbolic links;
// nothing outside the root is ever looked at) and returns its regular
// files, at most MaxWatched of them.
func (w *fsWatch) scan() (map[string]fileState, error) {
	root, err := w.files.open()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	skip := w.skipRel()
	out := map[string]fileState{}
	errFull := errors.New("full")
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			return nil // a file that vanished mid-scan, or an unreadable directory
		}
		if d.IsDir() && skip != "" && p == skip {
			return fs.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil || !info.Mode().IsRegular() {
			return nil
		}
		out[p] = fileState{Size: info.Size(), ModTime: info.ModTime().UnixNano(), Mode: uint32(info.Mode())}
		if len(out) >= MaxWatched {
			return errFull
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFull) {
		return nil, err
	}
	return out, nil
}

// skipRel returns the state directory's path relative to the root, with
// forward slashes, when it lies inside the root ("" otherwise).
func (w *fsWatch) skipRel() string {
	if w.skip == "" {
		return ""
	}
	root, err := w.files.resolvedRoot()
	if err != nil {
		return ""
	}
	rel, err := filepath.Rel(root, w.skip)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return ""
	}
	return filepath.ToSlash(rel)
}

// load reads the last snapshot from the state directory (best effort).
func (w *fsWatch) load() {
	if w.stateDir == "" {
		return
	}
	dir, err := os.OpenRoot(w.stateDir)
	if err != nil {
		return
	}
	defer dir.Close()
	if b, err := dir.ReadFile(snapshotFile); err == nil {
		_ = json.Unmarshal(b, &w.snap)
	}
}

// save writes the snapshot to the state directory (best effort), through an
// [os.Root]: a symbolic link planted there is not followed out of it.
func (w *fsWatch) save() {
	if w.stateDir == "" {
		return
	}
	b, err := json.Marshal(w.snap)
	if err != nil {
		return
	}
	dir, err := os.OpenRoot(w.stateDir)
	if err != nil {
		return
	}
	defer dir.Close()
	tmp := snapshotFile + ".tmp"
	_ = dir.Remove(tmp) // a leftover (or a planted link) is replaced, never written through
	if dir.WriteFile(tmp, b, 0o600) == nil {
		_ = dir.Rename(tmp, snapshotFile)
	}
}

// diff lists what changed from old to now, in path order.
func diff(old, now map[string]fileState) []fsChange {
	var out []fsChange
	for p, st := range now {
		size := st.Size
		if prev, ok := old[p]; !ok {
			out = append(out, fsChange{Path: p, Change: "created", Size: &size})
		} else if prev != st {
			out = append(out, fsChange{Path: p, Change: "changed", Size: &size})
		}
	}
	for p := range old {
		if _, ok := now[p]; !ok {
			out = append(out, fsChange{Path: p, Change: "removed"})
		}
	}
	slices.SortFunc(out, func(a, b fsChange) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// fsArgs are fs.changed's arguments.
type fsArgs struct {
	// Dir limits the stream to files under this directory, relative to the
	// root ("" or "." for all).
	Dir string `json:"dir"`
	// Glob keeps the files whose name (a pattern without "/") or whose path
	// relative to Dir (a pattern with "/") matches it, in path.Match syntax.
	Glob string `json:"glob"`
}

// matchFS compiles fs.changed's arguments.
func matchFS(raw json.RawMessage) (func(json.RawMessage) bool, error) {
	var a fsArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, err
	}
	dir := path.Clean(filepath.ToSlash(a.Dir))
	if a.Dir == "" {
		dir = "."
	}
	if path.IsAbs(dir) || dir == ".." || strings.HasPrefix(dir, "../") {
		return nil, errors.New("dir must be relative to the root and stay inside it")
	}
	if _, err := path.Match(a.Glob, ""); err != nil {
		return nil, errors.New("glob: " + err.Error())
	}
	return func(data json.RawMessage) bool {
		var c fsChange
		if json.Unmarshal(data, &c) != nil {
			return false
		}
		rel := c.Path
		if dir != "." {
			var ok bool
			if rel, ok = strings.CutPrefix(c.Path, dir+"/"); !ok {
				return false
			}
		}
		if a.Glob == "" {
			return true
		}
		if !strings.Contains(a.Glob, "/") {
			rel = path.Base(rel)
		}
		ok, _ := path.Match(a.Glob, rel)
		return ok
	}, nil
}
