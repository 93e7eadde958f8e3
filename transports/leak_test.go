package transports

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/mcprt/mcprt/messages"
)

// TestNoGoroutineLeak opens and closes one connection of every kind and
// checks that nothing of them survives Close and Dialer.Wait: no reader, no
// SSE stream, no idle HTTP connection. Not parallel, so that no other test's
// goroutines are running; TestMain checks the whole package the same way.
func TestNoGoroutineLeak(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // runs last: after the peers are gone
	d := &Dialer{}
	eps := map[string]messages.Endpoint{
		"stdio":  stdioEP(t, ""),
		"socket": socketEP(t, ""),
		"http":   httpEP(t, "--http 127.0.0.1:0"),
		"sse":    httpEP(t, "--sse 127.0.0.1:0"),
	}
	for name, ep := range eps {
		c, _ := dialWith(t, d, ep)
		echo(t, c, name)
		// A notification and a cancelled request leave nothing behind either.
		c.Notify("notifications/mcprt-test", nil)
		id := c.send("tools/call", toolParams("slow", map[string]any{"ms": 60000}))
		c.Cancel(id)
		wantErr(t, name+" cancelled", c.result(id).Err, messages.KindAborted)
		if cc := c.close(); cc.Err != nil {
			t.Errorf("%s: ConnClosed.Err = %v", name, cc.Err)
		}
	}
	d.Wait()
	// The peers still run (their cleanups stop them), but nothing of ours
	// may: every goroutine left must be testenv's, which watch the peers.
	goleak.VerifyNone(t, goleak.IgnoreAnyFunction("github.com/mcprt/mcprt/internal/testonly/testenv.start.func1"),
		goleak.IgnoreAnyFunction("github.com/mcprt/mcprt/internal/testonly/testenv.start.func3"),
		goleak.IgnoreAnyFunction("os/exec.(*Cmd).Start.func2"))
}
