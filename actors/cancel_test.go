package actors

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
)

// Cancelling a call's context ends that call with aborted at once, on every
// transport: the server sees the cancellation (notifications/cancelled on
// stdio, sockets and legacy SSE; the aborted POST on Streamable HTTP), while
// a sibling call on the same connection carries on and succeeds.
func TestHostCancellationPerTransport(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		transport messages.TransportKind
		endpoint  func(t *testing.T, cancelLog string) messages.Endpoint
	}{
		{"stdio", messages.TransportStdio, func(t *testing.T, log string) messages.Endpoint {
			return messages.Endpoint{Command: testenv.Self(t), Env: testenv.TestServerEnv("--stdio", testserver.EnvCancelLog+"="+log)}
		}},
		{"socket", messages.TransportSocket, func(t *testing.T, log string) messages.Endpoint {
			path, _ := testenv.StartTestServer(t, "--socket "+filepath.Join(t.TempDir(), "s.sock"), testserver.EnvCancelLog+"="+log)
			return messages.Endpoint{Socket: path}
		}},
		{"streamable-http", messages.TransportHTTP, func(t *testing.T, log string) messages.Endpoint {
			url, _ := testenv.StartTestServer(t, "--http 127.0.0.1:0", testserver.EnvCancelLog+"="+log)
			return messages.Endpoint{URL: url}
		}},
		{"sse", messages.TransportSSE, func(t *testing.T, log string) messages.Endpoint {
			url, _ := testenv.StartTestServer(t, "--sse 127.0.0.1:0", testserver.EnvCancelLog+"="+log)
			return messages.Endpoint{URL: url}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			log := filepath.Join(t.TempDir(), "cancel.log")
			r := newRig(t, []ServerConfig{{Name: "x", Endpoint: tc.endpoint(t, log), CallTimeout: time.Hour}})
			sibling := r.start(r.ctx, "x", "slow", `{"ms":300}`, "")
			hctx, cancel := context.WithCancel(r.ctx)
			defer cancel()
			hang := r.start(hctx, "x", "hang", "", "c1")
			r.waitProgress("x", "c1")
			cancel()
			rep := r.recv(hang, "the cancelled call")
			wantKind(t, rep, messages.KindAborted)
			if !strings.Contains(rep.Err.Error(), `server "x"`) {
				t.Fatalf("abort error does not name the server: %v", rep.Err)
			}
			sib := r.recv(sibling, "the sibling call")
			if got := text(t, sib); got != "slept 300" || sib.Gen != 1 {
				t.Fatalf("sibling: %q on gen %d", got, sib.Gen)
			}
			if st := r.wantState("x", messages.StateConnected); st.Generation != 1 || st.Transport != tc.transport || st.Leases != 0 {
				t.Fatalf("after the cancellation: %+v", st)
			}
			poll(r.ctx, t, "the server to log the cancellation", func() bool {
				data, _ := os.ReadFile(log)
				return strings.Contains(string(data), "cancelled")
			})
			if got := text(t, r.call(r.ctx, "x", "echo", `{"message":"still here"}`)); got != "echo: still here" {
				t.Fatalf("call after the cancellation: %q", got)
			}
			if d := r.dialer.DialCount("x"); d != 1 {
				t.Fatalf("%d dials", d)
			}
		})
	}
}

// The catalog deadline (catalogTimeoutMs) bounds a listing the server never
// answers; the connection stays usable.
func TestCatalogDeadline(t *testing.T) {
	t.Parallel()
	cfg := stdio(t, "mute", "--ignore-unknown")
	cfg.CatalogTimeout = 7 * time.Second
	r := newRig(t, []ServerConfig{cfg})
	ch := make(chan messages.ListReply, 1)
	go func() { ch <- r.sys.ListAll(r.ctx, "mute", "prompts/list", "prompts", messages.OriginModel) }()
	r.dialer.Wait(r.ctx, t, "prompts/list sent", func() bool { return r.dialer.SentCount("mute prompts/list") == 1 })
	r.clk.Advance(7*time.Second - time.Millisecond)
	r.status("mute")
	select {
	case rep := <-ch:
		t.Fatalf("listing ended before its deadline: %+v", rep.Err)
	default:
	}
	r.clk.Advance(time.Millisecond)
	var rep messages.ListReply
	select {
	case rep = <-ch:
	case <-r.ctx.Done():
		t.Fatal("the catalog deadline never ended the listing")
	}
	if rep.Err == nil || rep.Err.Kind != messages.KindRequestTimeout || !strings.Contains(rep.Err.Message, "catalogTimeoutMs") {
		t.Fatalf("listing: %+v", rep.Err)
	}
	if got := text(t, r.call(r.ctx, "mute", "echo", `{"message":"ok"}`)); got != "echo: ok" {
		t.Fatalf("call after the catalog deadline: %q", got)
	}
	r.wantState("mute", messages.StateConnected)
}
