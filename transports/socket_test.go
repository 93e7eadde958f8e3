package transports

import (
	"errors"
	"net"
	"testing"

	"github.com/mcprt/mcprt/messages"
)

// TestSocket: a Unix socket connection works, and Close closes the socket
// (the server, which serves many connections, stays up).
func TestSocket(t *testing.T) {
	t.Parallel()
	ep := socketEP(t, "")
	c, info := dial(t, ep)
	if info.Transport != messages.TransportSocket || info.ProtocolVersion != messages.Protocol20251125 || info.Name != "testserver" {
		t.Errorf("info = %+v", info)
	}
	echo(t, c, "over a socket")
	sock := c.Conn.(*conn).sock
	if cc := c.close(); cc.Err != nil {
		t.Errorf("ConnClosed.Err = %v after Close", cc.Err)
	}
	if _, err := sock.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("socket read after Close: %v; want net.ErrClosed", err)
	}
	res := callTool(t, c, "echo", map[string]any{"message": "late"})
	wantErr(t, "call after Close", res.Err, messages.KindDisconnected)

	c2, _ := dial(t, ep)
	echo(t, c2, "second connection")
}

// TestSocketServerGone: when the server closes the socket the call in flight
// fails as disconnected and the connection closes with the same reason.
func TestSocketServerGone(t *testing.T) {
	t.Parallel()
	path := shortTempDir(t) + "/s"
	where, proc := startTestServer(t, "--socket "+path)
	c, _ := dial(t, messages.Endpoint{Socket: where})
	id := c.send("tools/call", toolParams("slow", map[string]any{"ms": 60000}))
	killProc(t, proc)
	// The kernel reports the end either as end of file or, when the server
	// died with unread input, as a reset.
	res := c.result(id)
	wantErr(t, "call in flight", res.Err, messages.KindDisconnected)
	cc := c.waitClosed()
	wantErr(t, "ConnClosed", cc.Err, messages.KindDisconnected)
	for _, e := range []*messages.Error{res.Err, cc.Err} {
		if m := e.Message; m != "server closed the socket" && m != "connection reset by the server" {
			t.Errorf("error %q does not say the server closed or reset the socket", m)
		}
	}
}
