package remote

import (
	"encoding/json"

	"sync"

	mcprt "github.com/mcprt/mcprt"
)

// A session's WatchStatus and WatchTools, fed by the member's change
// notices (server_watch.go): a tool-set change signals every WatchTools
// channel; a status change makes one goroutine at a time fetch the status
// (Status) and hand it to every WatchStatus channel, again if another
// notice came meanwhile, so a slow reader only ever misses intermediate
// snapshots, never the latest. Close gives status watchers an empty
// snapshot and closes every channel, as Runtime's do at shutdown.

// watchers are a session's watch channels.
type watchers struct {
	mu sync.Mutex
	// The fields below are guarded by mu.
	next       int
	status     map[int]chan mcprt.StatusSnapshot
	tools      map[int]chan struct{}
	refreshing bool // a goroutine is fetching the status
	again      bool // another status notice came while it did
	closed     bool
}

// WatchStatus returns a channel that receives the status at once and a
// new one after every change on the member (a server's state, the
// catalog); at Close it receives an empty snapshot and is closed. stop
// ends the watch and closes the channel.
func (s *Session) WatchStatus() (<-chan mcprt.StatusSnapshot, func()) {
	ch := make(chan mcprt.StatusSnapshot, 1)
	snap := s.Status()
	w := &s.watchers
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		ch <- mcprt.StatusSnapshot{Version: 1, Servers: []mcprt.ServerStatus{}}
		close(ch)
		return ch, func() {}
	}
	ch <- snap
	return ch, addWatchLocked(w, &w.status, ch)
}

// WatchTools returns a channel that receives a signal whenever the
// member's catalog changed in a way that may change Tools(): call Tools
// again. It is closed at Close or by stop.
func (s *Session) WatchTools() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	w := &s.watchers
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		close(ch)
		return ch, func() {}
	}
	return ch, addWatchLocked(w, &w.tools, ch)
}

// addWatchLocked adds ch to the watch channels by, under a new id; the
// stop it returns removes and closes it. w.mu is held.
func addWatchLocked[T any](w *watchers, by *map[int]chan T, ch chan T) func() {
	if *by == nil {
		*by = map[int]chan T{}
	}
	id := w.next
	w.next++
	(*by)[id] = ch
	return once(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if c, ok := (*by)[id]; ok {
			delete(*by, id)
			close(c)
		}
	})
}

// changed handles one change notice from the member.
func (s *Session) changed(body json.RawMessage) {
	var c changeQ
	if json.Unmarshal(body, &c) != nil {
		return
	}
	w := &s.watchers
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	if c.Tools {
		for _, ch := range w.tools {
			select {
			case ch <- struct{}{}:
			default: // a signal is pending already
			}
		}
	}
	if !c.Status || len(w.status) == 0 {
		return
	}
	if w.refreshing {
		w.again = true
		return
	}
	w.refreshing = true
	s.asking.Add(1) // Close waits for it
	go s.refreshStatus()
}

// refreshStatus fetches the status and hands it to every status watcher,
// once more for each notice that came meanwhile.
func (s *Session) refreshStatus() {
	defer s.asking.Done()
	w := &s.watchers
	for {
		snap := s.Status()
		w.mu.Lock()
		for _, ch := range w.status {
			select {
			case <-ch: // the reader missed it: the latest wins
			default:
			}
			ch <- snap
		}
		if !w.again || w.closed {
			w.refreshing = false
			w.mu.Unlock()
			return
		}
		w.again = false
		w.mu.Unlock()
	}
}

// closeAll ends every watch: status watchers get an empty snapshot.
func (w *watchers) closeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	for id, ch := range w.status {
		select {
		case <-ch:
		default:
		}
		ch <- mcprt.StatusSnapshot{Version: 1, Servers: []mcprt.ServerStatus{}}
		close(ch)
		delete(w.status, id)
	}
	for id, ch := range w.tools {
		close(ch)
		delete(w.tools, id)
	}
}
