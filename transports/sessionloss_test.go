package transports

import (
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/messages"
)

// TestSessionLoss (issue 13 item 10): server-everything over Streamable
// HTTP restarted mid-run no longer knows the connection's session: the
// next request fails as disconnected, saying the session was lost (not an
// RPC or tool error), and the connection closes with that reason so that
// the next call starts a new session.
func TestSessionLoss(t *testing.T) {
	t.Parallel()
	port := testenv.FreePort(t)
	first := testenv.StartEverythingAt(t, "streamableHttp", port)
	ep := messages.Endpoint{URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port)}
	c, _ := dial(t, ep)
	if got := toolText(t, callTool(t, c, "echo", map[string]any{"message": "before"})); got != "Echo: before" {
		t.Fatalf("echo = %q", got)
	}
	killProc(t, first)
	testenv.StartEverythingAt(t, "streamableHttp", port)

	res := callTool(t, c, "echo", map[string]any{"message": "after the restart"})
	wantErr(t, "call on the lost session", res.Err, messages.KindDisconnected, "session")
	t.Logf("error: %v", res.Err)
	cc := c.waitClosed()
	wantErr(t, "ConnClosed", cc.Err, messages.KindDisconnected, "session")

	c2, _ := dial(t, ep)
	if got := toolText(t, callTool(t, c2, "echo", map[string]any{"message": "new session"})); got != "Echo: new session" {
		t.Fatalf("echo on the new session = %q", got)
	}
}

// TestSessionLoss404: the spec's answer to a lost session, HTTP 404 on a
// POST carrying Mcp-Session-Id, is taken the same way: disconnected, saying
// so, the connection closes, and a new connection works. (mcp-go's own
// server accepts unknown session ids, so a proxy in front of the test
// server plays the server that forgot the session.)
func TestSessionLoss404(t *testing.T) {
	t.Parallel()
	target, err := url.Parse(httpEP(t, "--http 127.0.0.1:0").URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	var forgot atomic.Value // the session id the server forgot
	forgot.Store("")
	base := loopbackServer(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); r.Method == http.MethodPost && id != "" && id == forgot.Load() {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	ep := messages.Endpoint{URL: base + target.Path}
	c, _ := dial(t, ep)
	echo(t, c, "before")
	forgot.Store(c.Conn.(*conn).tr.SessionID())
	res := callTool(t, c, "echo", map[string]any{"message": "after"})
	wantErr(t, "call on the lost session", res.Err, messages.KindDisconnected, "lost the session (HTTP 404)")
	cc := c.waitClosed()
	wantErr(t, "ConnClosed", cc.Err, messages.KindDisconnected, "lost the session")
	c2, _ := dial(t, ep)
	echo(t, c2, "new session")
}

// TestSessionLostInHandshake: a server that loses the session between
// initialize and notifications/initialized (404) fails the dial at once,
// saying so; it is not taken for a legacy SSE server (whose endpoint event
// its GET stream would never send: the dial hung until the startup
// deadline).
func TestSessionLostInHandshake(t *testing.T) {
	t.Parallel()
	target, err := url.Parse(httpEP(t, "--http 127.0.0.1:0").URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	base := loopbackServer(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") != "" {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	e := dialErr(t, messages.Endpoint{URL: base + target.Path})
	wantErr(t, "session lost in the handshake", e, messages.KindInitFailed, "lost the session (HTTP 404)")
}
