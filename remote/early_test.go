package remote

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testkit"
)

// A session that attaches as soon as the member's port answers, while
// Serve has not returned (protoactor's cluster start listens, then waits
// a second), finds the token file and is served: the token file is
// written before the port listens when the port is named, and a session's
// stream waits until the gateway runs.
func TestAttachAsSoonAsThePortAnswers(t *testing.T) {
	ctx := testkit.Ctx(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	dir := t.TempDir()
	srv := NewServer(ServeOptions{Listen: addr, TokenFile: filepath.Join(dir, "member.token"), ClusterTokenFile: filepath.Join(dir, "cluster.token")})
	rt, err := mcprt.Start(ctx, mcprt.Options{Config: &config.File{MCPServers: map[string]config.Server{"ts": testServer(t, nil)}}, Host: srv.Host()})
	if err != nil {
		t.Fatal(err)
	}
	var served sync.WaitGroup
	served.Add(1)
	var serveErr error
	go func() {
		defer served.Done()
		serveErr = srv.Serve(rt)
	}()
	t.Cleanup(func() {
		served.Wait()
		_ = srv.Close()
		_ = rt.Close()
	})
	testkit.Poll(ctx, t, "the member's port answers", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	})
	if _, err := os.Stat(filepath.Join(dir, "member.token")); err != nil {
		t.Fatalf("the port answers but the token file is not there: %v", err)
	}
	s, err := Attach(ctx, addr, AttachOptions{TokenFile: filepath.Join(dir, "member.token")})
	if err != nil {
		t.Fatalf("attach as soon as the port answers: %v", err)
	}
	defer s.Close()
	tool, _ := s.Tool(mcprt.MCPToolName)
	if res := tool.Execute(ctx, json.RawMessage(`{"server":"ts","tool":"echo","args":{"message":"early"}}`)); res.IsError {
		t.Fatalf("call: %s", res.Text)
	}
	served.Wait()
	if serveErr != nil {
		t.Fatal(serveErr)
	}
}
