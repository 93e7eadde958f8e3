package transports

import (
	"testing"

	"github.com/mcprt/mcprt/messages"
)

// TestServerStopsReading: a server that closes its input (stdio: its stdin;
// a socket: shutdown(SHUT_RD)) before answering tools/list, and keeps its
// output open, makes the next write fail before the reader sees end of
// file. The request written then fails with one clear disconnected error
// saying the server stopped reading, the connection closes with the same
// reason, and a stdio child is reaped. (Before the fix the failed write
// dereferenced a nil status slot and the process died with SIGSEGV.)
func TestServerStopsReading(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ep   func(t *testing.T) messages.Endpoint
		want string
	}{
		{"stdio", func(t *testing.T) messages.Endpoint { return stdioEP(t, "--close-input-on tools/list") }, "server stopped reading its stdin"},
		{"socket", func(t *testing.T) messages.Endpoint { return socketEP(t, "--close-input-on tools/list") }, "server stopped reading the socket"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, _ := dial(t, tc.ep(t))
			var child int
			if p := c.Conn.(*conn).proc; p != nil {
				child = p.cmd.Process.Pid
			}
			if r := call(t, c, "tools/list", nil); r.Err != nil {
				t.Fatalf("tools/list: %v", r.Err)
			}
			res := callTool(t, c, "echo", map[string]any{"message": "after the input closed"})
			wantErr(t, "call after the server stopped reading", res.Err, messages.KindDisconnected, tc.want)
			cc := c.waitClosed()
			wantErr(t, "ConnClosed", cc.Err, messages.KindDisconnected)
			if child != 0 && !notRunning(child) {
				t.Errorf("stdio child %d still running after ConnClosed", child)
			}
		})
	}
}
