package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/remote"
)

// attachedCaller serves a runtime with one stdio test server (a member in
// this process, reached over loopback gRPC like any other) and calls
// through an attached session's mcp tool, as a model would.
func attachedCaller(b *testing.B, srv config.Server) caller {
	member := remote.NewServer(remote.ServeOptions{TokenFile: filepath.Join(b.TempDir(), "bench.token"), ClusterTokenFile: filepath.Join(b.TempDir(), "cluster.token")})
	rt, err := mcprt.Start(context.Background(), mcprt.Options{Config: &config.File{MCPServers: map[string]config.Server{"bench": srv}}, Host: member.Host()})
	if err != nil {
		b.Fatal(err)
	}
	if err := member.Serve(rt); err != nil {
		b.Fatal(err)
	}
	s, err := remote.Attach(context.Background(), member.Addr(), remote.AttachOptions{TokenFile: member.TokenFile()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		s.Close()
		member.Close()
		rt.Close()
	})
	tool, _ := s.Tool(mcprt.MCPToolName)
	args, _ := json.Marshal(map[string]any{"tool": "echo", "args": echoArgs})
	if r := tool.Execute(context.Background(), args); r.IsError || r.Text != echoText {
		b.Fatalf("attached: unexpected result %+v", r)
	}
	return func(ctx context.Context) error {
		if r := tool.Execute(ctx, args); r.IsError || r.Text != echoText {
			return fmt.Errorf("attached: unexpected result %+v", r)
		}
		return nil
	}
}

// BenchmarkAttached compares an attached session (the "rt" side of the
// metrics) with an embedded runtime (the "bare" side), each over its own
// stdio test server, in alternating blocks:
// go test ./internal/testonly/bench -run '^$' -bench Attached -benchtime 4000x
func BenchmarkAttached(b *testing.B) {
	for _, callers := range []int{1, 8} {
		b.Run(fmt.Sprintf("stdio/callers=%d", callers), func(b *testing.B) {
			srv := config.Server{Command: testenv.Self(b), Env: testenv.TestServerEnv("--stdio")}
			embedded := runtimeCaller(b, srv)
			attached := attachedCaller(b, srv)
			compare(b, embedded, attached, callers)
		})
	}
}

// fanHost counts the event items delivered to one session.
type fanHost struct {
	mu    sync.Mutex
	items int
	wake  chan struct{}
}

func (h *fanHost) Deliver(_ context.Context, m mcprt.HostMessage) {
	if m.Kind != "mcp-events" {
		return
	}
	h.mu.Lock()
	h.items += strings.Count(m.Text, `"subscription_id"`)
	h.mu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

func (h *fanHost) Notify(context.Context, mcprt.Notice) {}

func (h *fanHost) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.items
}

// BenchmarkEventsFanout: one events server on a member, 1 or 10 attached
// sessions subscribed with the same identity (one events stream, shared);
// each iteration emits 50 events at once (through the member's runtime)
// and waits until every session has all 50. Reports the wall time per
// burst (the 500 ms batch window is most of it) and this process's CPU
// per event (member and sessions are all in this process; it includes
// the emitting call).
// go test ./internal/testonly/bench -run '^$' -bench EventsFanout -benchtime 10x
func BenchmarkEventsFanout(b *testing.B) {
	for _, n := range []int{1, 10} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) { eventsFanout(b, n) })
	}
}

func eventsFanout(b *testing.B, sessions int) {
	const burst = 50
	srv := config.Server{Command: testenv.Self(b), Env: testenv.TestServerEnv("--stdio --events --events-heartbeat-ms 0")}
	member := remote.NewServer(remote.ServeOptions{TokenFile: filepath.Join(b.TempDir(), "bench.token"), ClusterTokenFile: filepath.Join(b.TempDir(), "cluster.token")})
	rt, err := mcprt.Start(context.Background(), mcprt.Options{Config: &config.File{MCPServers: map[string]config.Server{"ev": srv}}, Host: member.Host()})
	if err != nil {
		b.Fatal(err)
	}
	if err := member.Serve(rt); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		member.Close()
		rt.Close()
	})
	ctx := context.Background()
	hosts := make([]*fanHost, sessions)
	for i := range hosts {
		hosts[i] = &fanHost{wake: make(chan struct{}, 1)}
		s, err := remote.Attach(ctx, member.Addr(), remote.AttachOptions{TokenFile: member.TokenFile(), Host: hosts[i]})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		ev, _ := s.Tool(mcprt.EventsToolName)
		if r := ev.Execute(ctx, json.RawMessage(`{"action":"subscribe","server":"ev","name":"test.event","arguments":{}}`)); r.IsError {
			b.Fatal(r.Text)
		}
	}
	// Emitted through the member's own runtime (an embedded call), so the
	// CPU counted is the events' way in and out, not an attached call's.
	mcp, _ := rt.Tool(mcprt.MCPToolName)
	emit := json.RawMessage(`{"server":"ev","tool":"events_emit","args":{"name":"test.event","data":{"n":1}}}`)
	clk := clock.Real{}
	var walls []time.Duration
	b.ResetTimer()
	c0 := processCPU()
	for i := 0; i < b.N; i++ {
		t0 := clk.Now()
		for j := 0; j < burst; j++ {
			if r := mcp.Execute(ctx, emit); r.IsError {
				b.Fatal(r.Text)
			}
		}
		want := (i + 1) * burst
		for _, h := range hosts {
			for h.count() < want {
				<-h.wake
			}
		}
		walls = append(walls, clk.Now().Sub(t0))
	}
	cpu := processCPU() - c0
	b.StopTimer()
	sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
	b.ReportMetric(float64(walls[len(walls)/2].Milliseconds()), "burst-p50-ms")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*burst*sessions), "cpu-µs/event/session")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*burst), "cpu-µs/event")
}
