package transports

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
)

// TestHandshakeNegotiation covers protocolVersion auto, 2025-11-25 and
// 2026-07-28 against servers that speak both or only the new protocol.
func TestHandshakeNegotiation(t *testing.T) {
	t.Parallel()
	type start func(t *testing.T, args string) messages.Endpoint
	stdio := func(t *testing.T, args string) messages.Endpoint { return stdioEP(t, args) }
	http := func(t *testing.T, args string) messages.Endpoint { return httpEP(t, "--http 127.0.0.1:0 "+args) }
	socket := func(t *testing.T, args string) messages.Endpoint { return socketEP(t, args) }
	for _, tc := range []struct {
		name, args, pinned, want string
	}{
		{"auto", "", "", messages.Protocol20251125},
		{"auto-word", "", messages.ProtocolAuto, messages.Protocol20251125},
		{"modern-only-auto", "--modern-only", "", messages.Protocol20260728},
		{"pinned-legacy", "", messages.Protocol20251125, messages.Protocol20251125},
		{"pinned-modern", "", messages.Protocol20260728, messages.Protocol20260728},
		{"modern-only-pinned-modern", "--modern-only", messages.Protocol20260728, messages.Protocol20260728},
	} {
		for kind, open := range map[string]start{"stdio": stdio, "http": http, "socket": socket} {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				ep := open(t, tc.args)
				ep.ProtocolVersion = tc.pinned
				c, info := dial(t, ep)
				if info.ProtocolVersion != tc.want {
					t.Errorf("negotiated %q, want %q", info.ProtocolVersion, tc.want)
				}
				if info.Name != "testserver" || info.Version != testserver.Version || !strings.Contains(string(info.Capabilities), "tools") {
					t.Errorf("info = %+v", info)
				}
				echo(t, c, "after "+tc.name)
				res := call(t, c, "tools/list", nil)
				if res.Err != nil || !strings.Contains(string(res.Result), `"grandchild"`) {
					t.Errorf("tools/list = %.200s, %v", res.Result, res.Err)
				}
			})
		}
	}
}

// TestHandshakeLegacyRefused: pinned to 2025-11-25, a server that refuses
// initialize fails the dial as init_failed, with the server's reason.
func TestHandshakeLegacyRefused(t *testing.T) {
	t.Parallel()
	for _, ep := range []messages.Endpoint{stdioEP(t, "--modern-only"), httpEP(t, "--http 127.0.0.1:0 --modern-only")} {
		ep.ProtocolVersion = messages.Protocol20251125
		e := dialErr(t, ep)
		wantErr(t, ep.Kind().String(), e, messages.KindInitFailed, testserver.ModernOnlyMessage)
	}
}

// TestHandshakeNoProbe: auto sends initialize first, so a server that never
// answers unknown methods (server/discover) connects at once.
func TestHandshakeNoProbe(t *testing.T) {
	t.Parallel()
	for _, ep := range []messages.Endpoint{stdioEP(t, "--ignore-unknown"), socketEP(t, "--ignore-unknown")} {
		c, info := dial(t, ep)
		if info.ProtocolVersion != messages.Protocol20251125 {
			t.Errorf("%s: negotiated %q", ep.Kind(), info.ProtocolVersion)
		}
		echo(t, c, "no probe")
	}
}

// TestDialCancel: cancelling a dial whose handshake never ends reports
// aborted and releases the child.
func TestDialCancel(t *testing.T) {
	t.Parallel()
	ep := stdioEP(t, "--ignore-unknown")
	ep.ProtocolVersion = messages.Protocol20260728 // server/discover: never answered
	ep.Args = []string{"dial-cancel-" + t.Name()}
	d := newDialer(t)
	rec, dialing := startDial(t, d, ep)
	ctx := testCtx(t)
	child := waitChild(t, ctx, ep.Args[0])
	dialing.Cancel()
	m, _ := rec.await(t, ctx, "DialResult", isDialResult)
	res := m.(messages.DialResult)
	wantErr(t, "cancelled dial", res.Err, messages.KindAborted)
	if !d.WaitFor(testTimeout) {
		t.Fatal("dial goroutines still running")
	}
	if len(rec.all()) != 1 {
		t.Errorf("messages besides the DialResult: %s", rec.dump())
	}
	if state, _ := procState(child); state != "" {
		t.Errorf("child %d not reaped after the cancelled dial: state %q", child, state)
	}
}

// TestModernEnvelopeRequired: on a 2026-07-28 Streamable HTTP connection the
// server refuses a request without the _meta envelope, so the calls that
// succeed in TestHandshakeNegotiation prove the envelope is sent.
func TestModernEnvelopeRequired(t *testing.T) {
	t.Parallel()
	ep := httpEP(t, "--http 127.0.0.1:0")
	ep.ProtocolVersion = messages.Protocol20260728
	c, _ := dial(t, ep)
	inner := c.Conn.(*conn)
	params := toolParams("echo", map[string]any{"message": "bare"})
	bare, err := inner.tr.SendRequest(c.ctx, rpcRequest{ID: "bare-1", Method: "tools/call", Params: params})
	if err != nil {
		t.Fatalf("bare request: %v", err)
	}
	if bare.Error == nil || !strings.Contains(bare.Error.Message, "_meta") {
		t.Fatalf("bare request answered %+v; want an error about _meta", bare)
	}
	// The same request through the connection carries the envelope.
	echo(t, c, "enveloped")
	wrapped, header, err := inner.sess.prepare("tools/call", params)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(wrapped, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientCapabilities, mcp.MetaKeyClientInfo} {
		if _, ok := got.Meta[k]; !ok {
			t.Errorf("envelope lacks %s: %s", k, wrapped)
		}
	}
	if header.Get("Mcp-Method") != "tools/call" || header.Get("Mcp-Name") != "echo" {
		t.Errorf("headers = %v", header)
	}
}
