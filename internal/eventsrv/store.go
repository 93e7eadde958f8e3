package eventsrv

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/mcprt/mcprt/clock"
)

// epochFile names the file in the state directory that holds the epoch.
const epochFile = "epoch"

// store keeps the logs in a state directory, so that cursors survive a
// restart of the server process: the epoch in the file "epoch", and each
// event type's log in "<escaped name>.events.jsonl", one JSON record per
// line: an optional first line {"floor":N,"floorTime":T} (where retention
// cut the log), then the entries in order. Appends go to the end; the file
// is rewritten once it holds twice the retained count.
//
// Every file is opened through an [os.Root] on the directory, so a symbolic
// link planted in it cannot send a read or a write elsewhere.
type store struct {
	dir   *os.Root
	files map[string]*logFile
}

type logFile struct {
	f     *os.File
	lines int
}

// record is one line of a log file: an entry, or the floor line.
type record struct {
	Entry
	Floor     uint64    `json:"floor,omitempty"`
	FloorTime time.Time `json:"floorTime,omitzero"`
}

// openStore opens (creating) the state directory and returns it with its
// epoch, which it creates from r the first time.
func openStore(dir string, r clock.Rand) (*store, string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", fmt.Errorf("eventsrv: state directory: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, "", fmt.Errorf("eventsrv: state directory: %w", err)
	}
	b, err := root.ReadFile(epochFile)
	epoch := strings.TrimSpace(string(b))
	if errors.Is(err, os.ErrNotExist) || (err == nil && epoch == "") {
		epoch = clock.HexID(r, 8)
		err = root.WriteFile(epochFile, []byte(epoch+"\n"), 0o600)
	}
	if err != nil {
		_ = root.Close()
		return nil, "", fmt.Errorf("eventsrv: state directory: %w", err)
	}
	return &store{dir: root, files: map[string]*logFile{}}, epoch, nil
}

// path names name's log file inside the state directory.
func (s *store) path(name string) string {
	return url.PathEscape(name) + ".events.jsonl"
}

// load reads name's log into l (pruned to l's retention at now) and opens
// its file for appending. A line that does not decode ends the log there
// (a torn last write).
func (s *store) load(name string, l *eventLog, now time.Time) error {
	path := s.path(name)
	if f, err := s.dir.Open(path); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var r record
			if json.Unmarshal(sc.Bytes(), &r) != nil {
				break
			}
			switch {
			case r.Floor > 0 && r.Seq == 0:
				l.floor, l.floorTime, l.head = r.Floor, r.FloorTime, max(l.head, r.Floor)
			case r.Seq > 0 && l.head == 0:
				// No floor line: what came before is unknown.
				l.floor, l.head = r.Seq-1, r.Seq
				l.entries = append(l.entries, r.Entry)
			case r.Seq == l.head+1:
				l.entries = append(l.entries, r.Entry)
				l.head = r.Seq
			}
		}
		_ = f.Close()
		l.prune(now)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("eventsrv: load %s: %w", name, err)
	}
	return s.rewrite(name, l)
}

// append writes e to name's file, rewriting the file when it has grown to
// twice what l retains.
func (s *store) append(name string, e Entry, l *eventLog) error {
	lf := s.files[name]
	if lf == nil {
		return fmt.Errorf("eventsrv: log %s is not open", name)
	}
	if lf.lines >= 2*max(l.maxEvents, 1)+1 {
		return s.rewrite(name, l) // l holds e already
	}
	b, err := json.Marshal(record{Entry: e})
	if err != nil {
		return err
	}
	if _, err := lf.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("eventsrv: append to %s: %w", name, err)
	}
	lf.lines++
	return nil
}

// rewrite replaces name's file with l's floor and entries.
func (s *store) rewrite(name string, l *eventLog) error {
	if old := s.files[name]; old != nil {
		_ = old.f.Close()
		delete(s.files, name)
	}
	path := s.path(name)
	tmpName := "." + path + ".tmp"
	_ = s.dir.Remove(tmpName) // a leftover (or a planted link) is replaced, never written through
	tmp, err := s.dir.OpenFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("eventsrv: rewrite %s: %w", name, err)
	}
	w := bufio.NewWriter(tmp)
	enc := json.NewEncoder(w)
	lines := 0
	if l.floor > 0 {
		_ = enc.Encode(record{Floor: l.floor, FloorTime: l.floorTime})
		lines++
	}
	for _, e := range l.entries {
		if err := enc.Encode(record{Entry: e}); err != nil {
			break
		}
		lines++
	}
	err = errors.Join(w.Flush(), tmp.Close())
	if err == nil {
		err = s.dir.Rename(tmpName, path)
	}
	if err != nil {
		_ = s.dir.Remove(tmpName)
		return fmt.Errorf("eventsrv: rewrite %s: %w", name, err)
	}
	f, err := s.dir.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("eventsrv: reopen %s: %w", name, err)
	}
	s.files[name] = &logFile{f: f, lines: lines}
	return nil
}

// close closes the open files and the directory.
func (s *store) close() {
	for name, lf := range s.files {
		_ = lf.f.Close()
		delete(s.files, name)
	}
	_ = s.dir.Close()
}
