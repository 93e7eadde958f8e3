package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/remote"
)

// attachedCaller serves a runtime with one stdio test server (a member in
// this process, reached over loopback gRPC like any other) and calls
// through an attached session's mcp tool, as a model would.
func attachedCaller(b *testing.B, srv config.Server) caller {
	member := remote.NewServer(remote.ServeOptions{TokenFile: filepath.Join(b.TempDir(), "bench.token")})
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
