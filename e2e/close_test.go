package e2e

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcprt/mcprt"

	"go.uber.org/goleak"

	"github.com/mcprt/mcprt/actors"
	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/simseam"
)

// mcprt.Runtime.Close ends everything the runtime started, over the production
// dialer: in-flight calls on every transport fail with shutdown (or
// aborted), the stdio server is reaped before Close returns and its
// grandchild dies with its process group, new calls are refused, a second
// Close returns at once with the same result, and no goroutine survives.
//
// Not parallel: goleak inspects every goroutine of the process.
func TestCloseEndsEverything(t *testing.T) {
	ctx := testCtx(t)
	dir := t.TempDir()
	sock, _ := testenv.StartTestServer(t, "--socket "+filepath.Join(dir, "s.sock"))
	web, _ := testenv.StartTestServer(t, "--http 127.0.0.1:0")
	ignore := goleak.IgnoreCurrent() // the peers above live until the test's cleanup

	pidFile := filepath.Join(dir, "pid")
	kids := pidWrapper(t, pidFile, "")
	kids.Lifecycle = "eager"
	rt, err := mcprt.Start(ctx, mcprt.Options{Sim: &simseam.Seams{Clock: clock.NewManual(clock.Epoch), Rand: clock.NewSeededRand(3)}, Config: &config.File{MCPServers: map[string]config.Server{
		"kids": kids, "sock": {Socket: sock}, "web": {URL: web},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	mcp, _ := rt.Tool(mcprt.MCPToolName)
	run := func(ctx context.Context, args string) mcprt.Result { return mcp.Execute(ctx, []byte(args)) }

	res := run(ctx, `{"tool":"kids_grandchild"}`)
	grandchild, err := strconv.Atoi(res.Text)
	if err != nil || procGone(grandchild) {
		t.Fatalf("grandchild: %q", res.Text)
	}
	server := readPid(ctx, t, pidFile)
	var inflight []chan mcprt.Result
	for _, name := range []string{"kids", "sock", "web"} {
		ch := make(chan mcprt.Result, 1)
		inflight = append(inflight, ch)
		go func() { ch <- run(context.Background(), `{"tool":"`+name+`_hang"}`) }()
	}
	poll(ctx, t, "three calls in flight", func() bool {
		n := 0
		for _, s := range rt.ServerStatuses() {
			n += s.Leases
		}
		return n == 3
	})

	closed := make(chan error, 1)
	go func() { closed <- rt.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("Close did not return")
	}
	if !procGone(server) {
		t.Fatalf("server process %d survived Close", server)
	}
	for i, ch := range inflight {
		select {
		case res := <-ch:
			if c := res.ErrorCode(); c != "shutdown" && c != "aborted" {
				t.Fatalf("in-flight call %d: %q (%s)", i, res.Text, c)
			}
		case <-ctx.Done():
			t.Fatalf("in-flight call %d never ended", i)
		}
	}
	poll(ctx, t, "the grandchild to die", func() bool { return procGone(grandchild) })

	res = run(ctx, `{"tool":"kids_echo","args":{"message":"late"}}`)
	if res.ErrorCode() != "shutdown" || !strings.Contains(res.Text, `server "kids"`) {
		t.Fatalf("call after Close: %q (%s)", res.Text, res.ErrorCode())
	}
	for _, s := range rt.ServerStatuses() {
		if s.State != messages.StateClosed {
			t.Fatalf("%s after Close: %s", s.Name, s.State)
		}
	}
	if err := rt.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	goleak.VerifyNone(t, ignore)
}

// Close is bounded: when a connection never confirms that it closed, Close
// gives up after actors.ShutdownTimeout on the runtime's clock and says so;
// calling it again returns the same error.
func TestCloseIsBounded(t *testing.T) {
	t.Parallel()
	stuck := selfServer(t, "")
	stuck.Lifecycle = "eager"
	r := newRig(t, map[string]config.Server{"stuck": stuck}, true)
	if res := r.dialer.WaitResult(r.ctx, t, "stuck", 1); res.Err != nil {
		t.Fatal(res.Err)
	}
	r.dialer.SwallowClose()
	mark := r.clk.Mark()
	done := make(chan error, 1)
	go func() { done <- r.rt.Close() }()
	r.clk.WaitArmed(r.ctx, t, mark, actors.ShutdownTimeout)
	select {
	case err := <-done:
		t.Fatalf("Close returned while a connection was still open: %v", err)
	default:
	}
	r.clk.Advance(actors.ShutdownTimeout)
	var err error
	select {
	case err = <-done:
	case <-r.ctx.Done():
		t.Fatal("Close did not give up")
	}
	if err == nil || !strings.Contains(err.Error(), "did not finish") {
		t.Fatalf("Close after the timeout: %v", err)
	}
	if again := r.rt.Close(); again == nil || again.Error() != err.Error() {
		t.Fatalf("second Close: %v", again)
	}
	r.dialer.ReleaseClosed()
	r.real.Wait()
	r.rt = nil // closed here; the rig's cleanup only waits for the dialer
}
