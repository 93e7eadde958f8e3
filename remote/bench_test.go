package remote

import (
	"context"
	"encoding/json"
	"sort"
	"testing"
	"time"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/config"
)

// BenchmarkRoundTrip is the remote hop alone: one request (Servers, which
// reaches no MCP server) from an attached session to a member in this
// process over loopback gRPC and its reply, one caller at a time. The
// whole tool-call comparison is internal/testonly/bench's
// BenchmarkAttached.
// go test ./remote -run '^$' -bench RoundTrip -benchtime 20000x
func BenchmarkRoundTrip(b *testing.B) {
	r := newRigB(b)
	s, err := Attach(context.Background(), r.srv.Addr(), AttachOptions{TokenFile: r.srv.TokenFile()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	lat := make([]time.Duration, 0, b.N)
	clk := clock.Real{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := clk.Now()
		if got := s.Servers(); len(got) != 1 {
			b.Fatalf("servers %v", got)
		}
		lat = append(lat, clk.Now().Sub(t0))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

func newRigB(b *testing.B) *rig {
	return newRig(b, map[string]config.Server{"ts": {Command: "/nonexistent"}}, ServeOptions{})
}

// BenchmarkCall is a tool call (the test server's echo through the mcp
// tool) from an attached session, member in this process: for profiles
// of the attached path alone.
// go test ./remote -run '^$' -bench 'Call$' -benchtime 20000x -cpuprofile cpu.out
func BenchmarkCall(b *testing.B) {
	r := newRig(b, map[string]config.Server{"ts": testServer(b, nil)}, ServeOptions{})
	s, err := Attach(context.Background(), r.srv.Addr(), AttachOptions{TokenFile: r.srv.TokenFile()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	tool, _ := s.Tool(mcprt.MCPToolName)
	args := json.RawMessage(`{"server":"ts","tool":"echo","args":{"message":"benchmark"}}`)
	if res := tool.Execute(context.Background(), args); res.IsError {
		b.Fatal(res.Text)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if res := tool.Execute(context.Background(), args); res.Text != "echo: benchmark" {
			b.Fatal(res.Text)
		}
	}
}

// BenchmarkCall8 is BenchmarkCall with 8 callers at once on one session.
func BenchmarkCall8(b *testing.B) {
	r := newRig(b, map[string]config.Server{"ts": testServer(b, nil)}, ServeOptions{})
	s, err := Attach(context.Background(), r.srv.Addr(), AttachOptions{TokenFile: r.srv.TokenFile()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	tool, _ := s.Tool(mcprt.MCPToolName)
	args := json.RawMessage(`{"server":"ts","tool":"echo","args":{"message":"benchmark"}}`)
	if res := tool.Execute(context.Background(), args); res.IsError {
		b.Fatal(res.Text)
	}
	b.SetParallelism(4) // 8 callers on 2 processors
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if res := tool.Execute(context.Background(), args); res.Text != "echo: benchmark" {
				b.Error(res.Text)
				return
			}
		}
	})
}

// BenchmarkEmbedded8 is BenchmarkCall8 on the member's runtime itself (no
// session, no remote hop): the part of an attached call's profile that
// embedding costs too.
// go test ./remote -run '^$' -bench 'Embedded8$' -benchtime 40000x -cpuprofile cpu.out
func BenchmarkEmbedded8(b *testing.B) {
	r := newRig(b, map[string]config.Server{"ts": testServer(b, nil)}, ServeOptions{})
	tool, _ := r.rt.Tool(mcprt.MCPToolName)
	args := json.RawMessage(`{"server":"ts","tool":"echo","args":{"message":"benchmark"}}`)
	if res := tool.Execute(context.Background(), args); res.IsError {
		b.Fatal(res.Text)
	}
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if res := tool.Execute(context.Background(), args); res.Text != "echo: benchmark" {
				b.Error(res.Text)
				return
			}
		}
	})
}
