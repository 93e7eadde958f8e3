//go:build unix

package e2e

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	ts "github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/remote"
)

// Typed subscriptions through sessions (remote.Session.Subscribe) with
// real processes: the member, its events server, and a session process.

// eventsServer is the test server with events (heartbeats every 30 s, so
// no stream ends by the runtime's watchdog during a test).
func eventsServer(t *testing.T) map[string]any {
	return map[string]any{"command": testenv.Self(t), "env": testenv.TestServerEnv("--stdio --events")}
}

// streamsOn counts the events streams open on the events server srv.
func streamsOn(ctx context.Context, t *testing.T, s *remote.Session, srv string) int {
	t.Helper()
	var out struct{ Streams []json.RawMessage }
	res := mcpCall(ctx, t, s, `{"server":"`+srv+`","tool":"`+ts.ToolEventsStreams+`","args":{}}`)
	if res.IsError || json.Unmarshal([]byte(res.Text), &out) != nil {
		t.Fatalf("events_streams: %s", res.Text)
	}
	return len(out.Streams)
}

// typedLog records a typed subscription's events' data.n, in order.
type typedLog struct {
	mu sync.Mutex
	ns []int // guarded by mu
}

func (l *typedLog) handle(d mcprt.Delivery) {
	if d.Event == nil {
		return
	}
	var v struct{ N int }
	_ = json.Unmarshal(d.Event.Data, &v)
	l.mu.Lock()
	l.ns = append(l.ns, v.N)
	l.mu.Unlock()
}

func (l *typedLog) got() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.ns)
}

// TestSharedTypedSubscribeSessionKilled: SIGKILL of a session's process
// ends its typed subscription on the member: the server's stream closes.
func TestSharedTypedSubscribeSessionKilled(t *testing.T) {
	t.Parallel()
	m := startMember(t, map[string]any{"ev": eventsServer(t)})
	ctx := testCtx(t)
	watcher := attach(t, m, nil)
	_, child := testenv.StartSelf(t, map[string]string{envAttachAddr: m.addr, remote.EnvTokenDir: m.tokens, envAttachSubscribe: "ev " + ts.EventTest})
	if n := streamsOn(ctx, t, watcher, "ev"); n != 1 {
		t.Fatalf("%d streams with the child's typed subscription; want 1", n)
	}
	if err := syscall.Kill(-child.Cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, "the killed session's stream to close", func() bool { return streamsOn(ctx, t, watcher, "ev") == 0 })
}

// TestSharedTypedSubscribeThroughPeer: a typed subscription of a server
// another member runs is made there through this member, its events come
// back in order, and Stop (then the session's Close, for a second one)
// ends it on that member's server.
func TestSharedTypedSubscribeThroughPeer(t *testing.T) {
	t.Parallel()
	ct := clusterTokenFile(t)
	a := startMemberWith(t, nil, map[string]any{"ev": eventsServer(t)}, map[string]string{envCluster: ct})
	b := startMemberWith(t, nil,
		testServers(t, "local"),
		map[string]string{envServePeer: a.addr, envCluster: ct})
	ctx := testCtx(t)
	x, y := attach(t, b, nil), attach(t, b, nil)
	poll(ctx, t, "B to have A in its membership", func() bool { return slices.Contains(x.Servers(), "ev") })
	var lx, ly typedLog
	subX, err := x.Subscribe(ctx, "ev", ts.EventTest, map[string]any{"tag": "x"}, lx.handle)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := y.Subscribe(ctx, "ev", ts.EventTest, map[string]any{"tag": "y"}, ly.handle); err != nil {
		t.Fatal(err)
	}
	if n := streamsOn(ctx, t, x, "ev"); n != 2 {
		t.Fatalf("%d streams on A's server; want 2", n)
	}
	for n := 1; n <= 5; n++ {
		for _, tag := range []string{"x", "y"} {
			if res := mcpCall(ctx, t, x, `{"server":"ev","tool":"events_emit","args":{"name":"`+ts.EventTest+`","data":{"tag":"`+tag+`","n":`+strconv.Itoa(n)+`}}}`); res.IsError {
				t.Fatalf("emit: %s", res.Text)
			}
		}
	}
	poll(ctx, t, "x's and y's events", func() bool { return len(lx.got()) >= 5 && len(ly.got()) >= 5 })
	if got := lx.got(); !slices.Equal(got, []int{1, 2, 3, 4, 5}) {
		t.Fatalf("x's events: %v", got)
	}
	if got := ly.got(); !slices.Equal(got, []int{1, 2, 3, 4, 5}) {
		t.Fatalf("y's events: %v", got)
	}
	subX.Stop()
	poll(ctx, t, "x's stream on A to close", func() bool { return streamsOn(ctx, t, y, "ev") == 1 })
	_ = y.Close()
	poll(ctx, t, "y's stream on A to close with y", func() bool { return streamsOn(ctx, t, x, "ev") == 0 })
}
