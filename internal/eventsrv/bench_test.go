package eventsrv

import (
	"bytes"
	"context"
	"io"
	"sync"
	"testing"

	"github.com/mcprt/mcprt/internal/mcpline"
	"github.com/mcprt/mcprt/internal/mcpserve"
)

// countingWriter counts the event frames written to it and says when it
// has seen want of them.
type countingWriter struct {
	mu   sync.Mutex
	n    int
	want int
	done chan struct{}
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n += bytes.Count(p, []byte(NoteEvent))
	if w.n >= w.want && w.done != nil {
		close(w.done)
		w.done = nil
	}
	return len(p), nil
}

// BenchmarkStream measures one stream sending published occurrences
// through mcpline's line front to a writer that only counts them: the
// server side's cost per event.
func BenchmarkStream(b *testing.B) {
	srv, err := New(Options{Heartbeat: -1, MaxEvents: b.N + 1}, Type{Name: "x"})
	if err != nil {
		b.Fatal(err)
	}
	inR, inW := io.Pipe()
	out := &countingWriter{want: b.N, done: make(chan struct{})}
	served := make(chan error, 1)
	go func() {
		served <- mcpline.ServeWith(context.Background(), mcpserve.New(mcpserve.Options{Name: "b", Version: "0"}), inR, out, mcpline.Options{Methods: srv.Methods()})
	}()
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"events/stream","params":{"name":"x"}}`+"\n"); err != nil {
		b.Fatal(err)
	}
	for len(srv.Streams()) == 0 || !srv.Streams()[0].Active {
	}
	done := out.done
	data := map[string]any{"path": "some/file.txt", "change": "changed", "size": 1234}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := srv.Publish("x", data); err != nil {
			b.Fatal(err)
		}
	}
	<-done
	b.StopTimer()
	_ = inW.Close()
	<-served
}
