package transports

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcprt/mcprt/messages"
)

// lockedBuffer is a log destination safe for concurrent handlers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestPanicEndsOnlyTheConnection: a panic on one of the transport's own
// goroutines (here the sink panics on the first server notification, which
// the stdio and socket readers and mcp-go's HTTP handler deliver) is
// recovered: the connection (and on stdio and sockets the call in flight) ends with an internal
// error naming the server, the stack reaches the debug log, and a stdio
// child is reaped. The test binary not dying is the first assertion.
func TestPanicEndsOnlyTheConnection(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ep   func(t *testing.T) messages.Endpoint
	}{
		{"stdio", func(t *testing.T) messages.Endpoint { return stdioEP(t, "") }},
		{"socket", func(t *testing.T) messages.Endpoint { return socketEP(t, "") }},
		{"http", func(t *testing.T) messages.Endpoint { return httpEP(t, "--http 127.0.0.1:0") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var log lockedBuffer
			d := newDialer(t)
			d.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
			rec := newRecorder()
			var panicked atomic.Bool
			sink := func(m any) {
				if _, ok := m.(messages.ConnNotification); ok && panicked.CompareAndSwap(false, true) {
					panic("test: the sink broke")
				}
				rec.sink(m)
			}
			ctx := testCtx(t)
			d.Dial(dialRequest(tc.ep(t)), sink)
			m, _ := rec.await(t, ctx, "DialResult", isDialResult)
			dr := m.(messages.DialResult)
			if dr.Err != nil {
				t.Fatal(dr.Err)
			}
			c := &tconn{Conn: dr.Conn, t: t, ctx: ctx, d: d, rec: rec}
			var child int
			if p := dr.Conn.(*conn).proc; p != nil {
				child = p.cmd.Process.Pid
			}
			// example/poke's notification precedes its answer on every
			// transport (over HTTP on the POST's response stream).
			res := call(t, c, "example/poke", json.RawMessage(`{}`))
			// On stdio and sockets the reader dies with the request in
			// flight; over HTTP the notification reaches mcp-go's handler,
			// and the result may win the race with the connection's end.
			if tc.name != "http" || res.Err != nil {
				wantErr(t, "call whose notification panicked", res.Err, messages.KindInternal, "internal error", "the connection was closed")
				if res.Err.Server != "srv" {
					t.Errorf("error names server %q", res.Err.Server)
				}
			}
			cc := c.waitClosed()
			wantErr(t, "ConnClosed", cc.Err, messages.KindInternal, "internal error")
			if child != 0 && !notRunning(child) {
				t.Errorf("stdio child %d still running after ConnClosed", child)
			}
			if l := log.String(); !strings.Contains(l, "recovered panic") || !strings.Contains(l, "test: the sink broke") || !strings.Contains(l, "guard_test.go") {
				t.Errorf("debug log lacks the recovered panic's stack:\n%s", l)
			}
			if !d.WaitFor(30 * time.Second) {
				t.Error("goroutines left")
			}
		})
	}
}
