package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Output backpressure of `runtime session` (docs/sidecar.md).
const (
	// sessionQueue is how many lines wait for stdout at most.
	sessionQueue = 256
	// deliverWait is how long a delivery or notice waits for room in the
	// queue when the host does not read stdout; then it is dropped and
	// counted.
	deliverWait = 5 * time.Second
)

// sessionOut owns the session's stdout: one goroutine writes queued lines
// in order. Answers and status lines wait for room (their number is
// bounded by the calls in flight and by coalescing); deliveries and notices
// wait at most deliverWait, then count as dropped, and the next line
// written is followed by a notice saying how many were dropped.
type sessionOut struct {
	lines   chan []byte
	done    chan struct{}
	dropped atomic.Int64
	told    int64 // dropped lines already reported; owned by the writer

	closeOnce sync.Once
}

func newSessionOut(w io.Writer) *sessionOut {
	o := &sessionOut{lines: make(chan []byte, sessionQueue), done: make(chan struct{})}
	go o.write(w)
	return o
}

// write is the writer goroutine: it ends when the queue is closed and
// drained.
func (o *sessionOut) write(w io.Writer) {
	defer close(o.done)
	for line := range o.lines {
		_, _ = w.Write(line)
		if n := o.dropped.Load(); n > o.told {
			note, _ := json.Marshal(map[string]any{"notice": map[string]any{
				"level": "warning",
				"text":  fmt.Sprintf("%d deliveries or notices were dropped: the host did not read stdout within %s", n-o.told, deliverWait),
			}})
			_, _ = w.Write(append(note, '\n'))
			o.told = n
		}
	}
}

// send queues one value's line, waiting for room.
func (o *sessionOut) send(v any) { o.lines <- encodeLine(v) }

// sendLine queues an encoded line, waiting for room.
func (o *sessionOut) sendLine(line []byte) { o.lines <- line }

// offer queues one line, waiting at most deliverWait; a line that finds no
// room is dropped and counted.
func (o *sessionOut) offer(v any) {
	line := encodeLine(v)
	select {
	case o.lines <- line:
		return
	default:
	}
	t := time.NewTimer(deliverWait)
	defer t.Stop()
	select {
	case o.lines <- line:
	case <-t.C:
		o.dropped.Add(1)
	}
}

// close flushes the queue and waits for the writer. Nothing may be sent
// after it.
func (o *sessionOut) close() {
	o.closeOnce.Do(func() { close(o.lines) })
	<-o.done
}

// encodeLine marshals v as one JSON line. Every value the session sends is
// made of JSON-safe types, so marshalling cannot fail; should it, the line
// says so rather than vanishing.
func encodeLine(v any) []byte {
	if a, ok := v.(answer); ok {
		return a.encode()
	}
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"error": map[string]any{"code": "internal", "message": "could not encode a line: " + err.Error()}})
	}
	return append(b, '\n')
}

// encode writes {"id": <the id as received>, <body members>}. The id is
// valid JSON from one input line, so it holds no newline.
func (a answer) encode() []byte {
	body := encodeLine(a.body) // {...}\n
	line := make([]byte, 0, len(a.id)+len(body)+8)
	line = append(line, `{"id":`...)
	line = append(line, a.id...)
	line = append(line, ',')
	return append(line, body[1:]...)
}
