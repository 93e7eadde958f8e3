package transports

import (
	"bytes"
	"strings"
	"sync"
)

// ring keeps the last n bytes written to it: a stdio server's stderr. Writes
// never block, so a chatty server cannot stall on a full pipe. When mirror
// is set (debug: true), every complete line is also passed to it.
type ring struct {
	mu sync.Mutex
	// The fields below are guarded by mu.
	buf     []byte
	n       int
	mirror  func(line string)
	partial []byte
}

func newRing(n int, mirror func(string)) *ring {
	return &ring{n: n, mirror: mirror}
}

// Write appends p, dropping the oldest bytes beyond the limit.
func (r *ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf = append(r.buf, p...)
	if over := len(r.buf) - r.n; over > 0 {
		r.buf = append(r.buf[:0], r.buf[over:]...)
	}
	if r.mirror != nil {
		r.partial = append(r.partial, p...)
		for {
			i := bytes.IndexByte(r.partial, '\n')
			if i < 0 {
				break
			}
			r.mirror(strings.TrimRight(string(r.partial[:i]), "\r"))
			r.partial = r.partial[i+1:]
		}
		if len(r.partial) > r.n {
			r.partial = r.partial[len(r.partial)-r.n:]
		}
	}
	return len(p), nil
}

// Tail returns up to max bytes of the most recent output, whole lines only
// where possible, trimmed.
func (r *ring) Tail(max int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.buf
	if len(b) > max {
		b = b[len(b)-max:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	return strings.TrimSpace(string(b))
}
