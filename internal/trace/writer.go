package trace

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

const (
	// QueueLines bounds the lines waiting for the writer's goroutine.
	QueueLines = 4096
	// MaxFileBytes is the size at which a server's trace file is rotated:
	// it becomes SERVER.jsonl.1 (replacing an older one) and a new file
	// starts.
	MaxFileBytes = 16 << 20
)

// Record is one trace line. Every field is metadata the runtime chose or
// measured; none holds server or configuration content beyond the
// server's configured name and a sanitized method name.
type Record struct {
	// Time is when it happened, from the injected clock (RFC 3339, UTC).
	Time   string `json:"t"`
	Server string `json:"server"`
	// Gen is the connection generation.
	Gen uint64 `json:"gen"`
	// Dir is "out" (to the server), "in" (from it) or "-" (the runtime's
	// own: a dial, a close).
	Dir string `json:"dir"`
	// Kind is dial, connected, request, response, notification, cancel,
	// frame (a stream's notification), close or closed.
	Kind   string `json:"kind"`
	Method string `json:"method,omitempty"`
	// ID is the request's operation id on its connection (its JSON-RPC id
	// is the connection's prefix and this number).
	ID uint64 `json:"id,omitempty"`
	// Bytes is the size of the params or result, not the content.
	Bytes int `json:"bytes,omitempty"`
	// Ms is a request's or a dial's duration in milliseconds.
	Ms *float64 `json:"ms,omitempty"`
	// End is how a request, dial or connection ended: ok, or a stable
	// error code (request_timeout, disconnected, aborted, rpc_error, ...),
	// not-sent or server-cancelled.
	End string `json:"end,omitempty"`
	// Transport and Protocol are the connection's, on dial and connected.
	Transport string `json:"transport,omitempty"`
	Protocol  string `json:"protocol,omitempty"`
	// Dropped counts the lines before this one that found the queue full.
	Dropped uint64 `json:"dropped,omitempty"`
}

// Writer appends records to DIR/SERVER.jsonl (mode 0600, in a directory of
// mode 0700), one file per server, from one goroutine. Its methods are
// safe for concurrent use.
type Writer struct {
	dir     string
	warn    func(error)
	mu      sync.Mutex // guards closed and sending on lines
	closed  bool
	lines   chan Record
	dropped atomic.Uint64
	done    chan struct{}
	// maxBytes is the rotation size (MaxFileBytes; tests make it small).
	maxBytes int64
}

// Open starts a writer into dir; warn (may be nil) hears of a file that
// cannot be written, once per server.
func Open(dir string, warn func(error)) *Writer {
	return open(dir, warn, MaxFileBytes)
}

func open(dir string, warn func(error), maxBytes int64) *Writer {
	w := &Writer{dir: dir, warn: warn, lines: make(chan Record, QueueLines), done: make(chan struct{}), maxBytes: maxBytes}
	go w.run()
	return w
}

// Write queues r; when the queue is full it is dropped and counted.
func (w *Writer) Write(r Record) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	if n := w.dropped.Load(); n > 0 {
		r.Dropped = n
	}
	select {
	case w.lines <- r:
		if r.Dropped > 0 {
			w.dropped.Add(^(r.Dropped - 1))
		}
	default:
		w.dropped.Add(1)
	}
}

// Close writes what is queued, closes the files and waits for the writer's
// goroutine. Later writes are ignored.
func (w *Writer) Close() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.lines)
	}
	w.mu.Unlock()
	<-w.done
}

// file is one server's open trace file.
type file struct {
	f      *os.File
	size   int64
	failed bool
}

func (w *Writer) run() {
	defer close(w.done)
	files := map[string]*file{}
	defer func() {
		for _, f := range files {
			if f.f != nil {
				_ = f.f.Close()
			}
		}
	}()
	for r := range w.lines {
		f := files[r.Server]
		if f == nil {
			f = &file{}
			files[r.Server] = f
		}
		if f.failed {
			continue
		}
		line, _ := json.Marshal(r)
		line = append(line, '\n')
		if err := w.append(r.Server, f, line); err != nil {
			f.failed = true
			if w.warn != nil {
				w.warn(fmt.Errorf("trace of server %q: %w (tracing it stops)", r.Server, err))
			}
		}
	}
}

// append writes line to the server's file, opening or rotating it first.
func (w *Writer) append(server string, f *file, line []byte) error {
	path := filepath.Join(w.dir, FileName(server))
	if f.f != nil && f.size+int64(len(line)) > w.maxBytes {
		_ = f.f.Close()
		f.f = nil
		if err := os.Rename(path, path+".1"); err != nil {
			return err
		}
	}
	if f.f == nil {
		if err := os.MkdirAll(w.dir, 0o700); err != nil {
			return err
		}
		h, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		st, err := h.Stat()
		if err != nil {
			_ = h.Close()
			return err
		}
		f.f, f.size = h, st.Size()
	}
	n, err := f.f.Write(line)
	f.size += int64(n)
	return err
}

// FileName is the trace file of a server: its name with every character
// but ASCII letters, digits, '.', '_' and '-' replaced by '_', and
// ".jsonl".
func FileName(server string) string {
	b := []byte(server)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] == '.' {
		b = append([]byte{'_'}, b...)
	}
	return string(b) + ".jsonl"
}
