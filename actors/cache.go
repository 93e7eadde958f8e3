package actors

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"sort"
	"sync"
	"time"

	"github.com/mcprt/mcprt/catalog"
)

// cacheWriter owns the disk cache's writes: actors hand it entries without
// blocking, and its one goroutine writes them (the file lock may be held by
// another process for a while). Several entries for one server coalesce to
// the latest.
type cacheWriter struct {
	path   string
	logger *slog.Logger
	wake   chan struct{} // capacity 1: "pending has work"
	done   chan struct{} // closed when the goroutine has returned

	mu sync.Mutex
	// The fields below are guarded by mu.
	pending map[string]cacheJob
	closed  bool
	busy    bool       // a batch is being written
	cond    *sync.Cond // broadcast when a batch is done
}

type cacheJob struct {
	hash  string
	entry catalog.Entry
	at    time.Time
}

func newCacheWriter(path string, logger *slog.Logger) *cacheWriter {
	w := &cacheWriter{path: path, logger: logger, wake: make(chan struct{}, 1), done: make(chan struct{}), pending: map[string]cacheJob{}}
	w.cond = sync.NewCond(&w.mu)
	go w.run()
	return w
}

// write queues one server's entry; it never blocks.
func (w *cacheWriter) write(server, hash string, e catalog.Entry, at time.Time) {
	w.mu.Lock()
	if !w.closed {
		w.pending[server] = cacheJob{hash: hash, entry: e, at: at}
	}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *cacheWriter) run() {
	defer close(w.done)
	for {
		<-w.wake
		w.mu.Lock()
		jobs, closed := w.pending, w.closed
		w.pending = map[string]cacheJob{}
		w.busy = true
		w.mu.Unlock()
		names := make([]string, 0, len(jobs))
		for n := range jobs {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			w.writeOne(n, jobs[n])
		}
		w.mu.Lock()
		w.busy = false
		w.cond.Broadcast()
		w.mu.Unlock()
		if closed {
			return
		}
	}
}

// writeOne writes one server's entry. A panic is recovered: that entry is
// not written (the stack goes to the debug log), the writer carries on.
func (w *cacheWriter) writeOne(server string, j cacheJob) {
	defer func() {
		if v := recover(); v != nil {
			w.logger.Warn("metadata cache not written", "server", server, "error", "internal error (recovered panic)")
			w.logger.Debug("recovered panic", "in", "cache writer", "server", server, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		}
	}()
	if err := catalog.WriteCache(w.path, server, j.hash, j.entry, j.at); err != nil {
		w.logger.Warn("metadata cache not written", "server", server, "error", err)
	}
}

// close writes what is pending and stops the goroutine.
func (w *cacheWriter) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	<-w.done
}

// FlushCache waits until every cache write queued so far has been
// written (for tests, and for hosts that exit right after a refresh).
func (s *System) FlushCache() {
	w := s.env.cache
	if w == nil {
		return
	}
	w.mu.Lock()
	for (len(w.pending) > 0 || w.busy) && !w.closed {
		w.cond.Wait()
	}
	w.mu.Unlock()
}

// seedCatalog reads the disk cache and puts every server's valid entry in
// the catalog, then starts the cache writer.
func (e *env) seedCatalog(cfg Config, logger *slog.Logger) {
	if cfg.CachePath == "" {
		return
	}
	f, err := catalog.ReadCache(cfg.CachePath)
	if err != nil {
		logger.Warn("metadata cache not used", "error", err)
	}
	now := e.clock.Now()
	for _, sc := range cfg.Servers {
		if sc.CacheKey == "" {
			continue
		}
		if c, ok := f.Lookup(sc.Name, sc.CacheKey, now); ok {
			e.catalog.seed(sc.Name, c)
		}
	}
	e.cache = newCacheWriter(cfg.CachePath, logger)
}
