package mcprt

import (
	"sync"

	"github.com/mcprt/mcprt/tools"
)

// StatusSnapshot is the runtime's status for hosts: per server its state
// (connected, connecting, cached, failed, needs-auth, not-connected,
// disabled), tool and resource counts and seconds since a remembered
// failure; and totals. See tools.StatusSnapshot.
type StatusSnapshot = tools.StatusSnapshot

// ServerStatus is one server of a StatusSnapshot.
type ServerStatus = tools.ServerStatus

// Status returns the status of every configured server (state, tool and
// resource counts, seconds since a failure, disabled) and the totals, from
// what the runtime already knows (the disk cache included): it never
// connects anything and never waits for a server. WatchStatus sends the
// same on every change.
func (r *Runtime) Status() StatusSnapshot { return r.mcp.Snapshot() }

// watchers hands status snapshots and tools-changed signals to hosts.
// Channels hold one value: a newer snapshot replaces one not yet read, and
// a tools-changed signal not yet read stands for any number of changes.
type watchers struct {
	mu sync.Mutex
	// The fields below are guarded by mu.
	status   map[int]chan StatusSnapshot
	tools    map[int]chan struct{}
	next     int
	closed   bool
	lastSeen uint64 // catalog version last signalled
}

// WatchStatus returns a channel that receives the current snapshot at once
// and a new one on every change of a server's state or of the catalog; at
// shutdown it receives an empty snapshot and is closed. A slow reader only
// ever misses intermediate snapshots, never the latest. stop ends the watch
// (and closes the channel).
func (r *Runtime) WatchStatus() (<-chan StatusSnapshot, func()) {
	w := &r.watch
	ch := make(chan StatusSnapshot, 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		ch <- StatusSnapshot{Version: 1, Servers: []ServerStatus{}}
		close(ch)
		return ch, func() {}
	}
	if w.status == nil {
		w.status = map[int]chan StatusSnapshot{}
	}
	id := w.next
	w.next++
	w.status[id] = ch
	ch <- r.mcp.Snapshot()
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if c, ok := w.status[id]; ok {
			delete(w.status, id)
			close(c)
		}
	}
}

// WatchTools returns a channel that receives a signal whenever the
// catalog changed in a way that may change Tools() (a server was listed,
// its tools, resources or prompts changed, a cached catalog was replaced):
// the host then calls Tools() again and re-registers what changed. The
// channel is closed at shutdown or by stop.
func (r *Runtime) WatchTools() (<-chan struct{}, func()) {
	w := &r.watch
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		close(ch)
		return ch, func() {}
	}
	if w.tools == nil {
		w.tools = map[int]chan struct{}{}
	}
	id := w.next
	w.next++
	w.tools[id] = ch
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if c, ok := w.tools[id]; ok {
			delete(w.tools, id)
			close(c)
		}
	}
}

// changed is the actors' change hook: it runs on an actor's goroutine and
// never blocks.
func (r *Runtime) changed() {
	if !r.ready.Load() {
		return
	}
	w := &r.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	if len(w.status) > 0 {
		snap := r.mcp.Snapshot()
		for _, ch := range w.status {
			replace(ch, snap)
		}
	}
	if v := r.sys.Catalog().Snapshot().Version; v != w.lastSeen {
		w.lastSeen = v
		w.signalToolsLocked()
	}
}

// signalToolsLocked signals every WatchTools watcher without blocking (a
// signal not yet taken stands for this one). w.mu is held.
func (w *watchers) signalToolsLocked() {
	for _, ch := range w.tools {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// replace puts v in a one-slot channel, dropping an unread older value.
func replace[T any](ch chan T, v T) {
	for {
		select {
		case ch <- v:
			return
		default:
		}
		select {
		case <-ch:
		default:
		}
	}
}

// shutdownWatchers sends every status watcher an empty snapshot and closes
// every channel.
func (r *Runtime) shutdownWatchers() {
	w := &r.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.closed = true
	for id, ch := range w.status {
		replace(ch, StatusSnapshot{Version: 1, Servers: []ServerStatus{}})
		close(ch)
		delete(w.status, id)
	}
	for id, ch := range w.tools {
		close(ch)
		delete(w.tools, id)
	}
}

// LiveActors counts the runtime's actors still alive: zero once Close has
// returned. For tests and diagnostics (the simulator checks it after
// every shutdown).
func (r *Runtime) LiveActors() int { return r.sys.LiveActors() }
