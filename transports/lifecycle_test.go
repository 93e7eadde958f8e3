package transports

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/messages"
)

// TestTrafficFollowsDialResult: a notification the server sends during the
// handshake reaches the sink after the DialResult, never before.
func TestTrafficFollowsDialResult(t *testing.T) {
	t.Parallel()
	early := `'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"early","seq":9007199254740993}}'`
	c, info := dial(t, cannedServer(early, "cat >/dev/null"))
	if info.Name != "canned" {
		t.Errorf("info = %+v", info)
	}
	m, i := c.rec.await(t, c.ctx, "the early notification", isNote("notifications/message"))
	if i == 0 {
		t.Errorf("the notification preceded the DialResult")
	}
	// Params are handed over as the server wrote them: no float64 detour.
	if n := m.(messages.ConnNotification); string(n.Params) != `{"level":"info","data":"early","seq":9007199254740993}` {
		t.Errorf("params = %s", n.Params)
	}
}

// TestServerRequestAnswered: a request from the server (mcprt offers no
// roots, sampling or elicitation) is answered with method not found, so the
// server does not wait for ever.
func TestServerRequestAnswered(t *testing.T) {
	t.Parallel()
	got := filepath.Join(t.TempDir(), "got")
	ep := cannedServer("", `printf '%s\n' '{"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}'; while read -r l; do echo "$l" >>"$0"; done`)
	ep.Args = append(ep.Args, got)
	c, _ := dial(t, ep)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		b, _ := os.ReadFile(got)
		for _, line := range strings.Split(string(b), "\n") {
			var reply struct {
				ID    string `json:"id"`
				Error struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			if json.Unmarshal([]byte(line), &reply) == nil && reply.ID == "srv-1" {
				if reply.Error.Code != -32601 {
					t.Errorf("reply to roots/list: %s", line)
				}
				return
			}
		}
		select {
		case <-tick.C:
		case <-c.ctx.Done():
			t.Fatalf("no reply to the server's request; the server read %q", b)
		}
	}
}

// TestCloseWhileWriteBlocked: Close ends a connection whose server stopped
// reading while a request was being written (the pipe is full).
func TestCloseWhileWriteBlocked(t *testing.T) {
	t.Parallel()
	// The server reads the first 1000 bytes after the handshake's, then
	// keeps its stdin open without reading.
	seen := filepath.Join(t.TempDir(), "seen")
	ep := cannedServer("", `head -c 1000 >"$0"; exec sleep 300`)
	ep.Args = append(ep.Args, seen)
	c, _ := dial(t, ep)
	big := json.RawMessage(fmt.Sprintf(`{"name":"echo","arguments":{"message":%q}}`, strings.Repeat("b", 4<<20)))
	id := c.send("tools/call", big)
	waitFileSize(t, c.ctx, seen, 1000) // the write is under way; it cannot finish
	if cc := c.close(); cc.Err != nil {
		t.Errorf("ConnClosed.Err = %v after Close", cc.Err)
	}
	if r := c.result(id); r.Err == nil || r.Err.Kind != messages.KindDisconnected {
		t.Errorf("the blocked request ended with %v; want disconnected", r.Err)
	}
}

// TestRelativeCommand: a relative command with a slash is resolved against
// the configured cwd, as the child will run it.
func TestRelativeCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(testenv.Self(t), filepath.Join(dir, "bin", "server")); err != nil {
		t.Fatal(err)
	}
	ep := stdioEP(t, "")
	ep.Command, ep.Cwd = "./bin/server", dir
	c, _ := dial(t, ep)
	echo(t, c, "relative")

	// A bare name is looked up on the child's PATH, the configured one.
	ep = withEnv(stdioEP(t, ""), "PATH="+filepath.Join(dir, "bin"))
	ep.Command = "server"
	c, _ = dial(t, ep)
	echo(t, c, "on the configured PATH")
}

// TestCloseWithDaemonHoldingStderr: a server whose helper escaped its
// process group (setsid) and keeps stderr open still closes.
func TestCloseWithDaemonHoldingStderr(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "daemon.pid")
	ep := stdioEP(t, "")
	ep.Command = "/bin/sh"
	ep.Args = []string{"-c", `setsid sh -c 'echo $$ > "$1"; exec sleep 300' daemon "$1" & exec "$0"`, testenv.Self(t), pidFile}
	c, _ := dial(t, ep)
	echo(t, c, "with a daemon")
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				killPid(pid)
			}
		}
	})
	c.ctx = ctxFor(t, 20*time.Second)
	if cc := c.close(); cc.Err != nil {
		t.Errorf("ConnClosed.Err = %v after Close", cc.Err)
	}
}

// TestCancelAfterDialResult: cancelling a dial that has delivered its
// connection does nothing to the connection.
func TestCancelAfterDialResult(t *testing.T) {
	t.Parallel()
	d := newDialer(t)
	rec, dialing := startDial(t, d, stdioEP(t, ""))
	ctx := testCtx(t)
	m, _ := rec.await(t, ctx, "DialResult", isDialResult)
	res := m.(messages.DialResult)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	dialing.Cancel()
	c := &tconn{Conn: res.Conn, t: t, ctx: ctx, d: d, rec: rec}
	echo(t, c, "after a late cancel")
	if cc := c.close(); cc.Err != nil {
		t.Errorf("ConnClosed.Err = %v after Close", cc.Err)
	}
}

// TestPinnedModernNoSSEFallback: legacy HTTP+SSE predates 2026-07-28, so a
// connection pinned to it does not fall back (and so does not silently
// speak 2025-11-25).
func TestPinnedModernNoSSEFallback(t *testing.T) {
	t.Parallel()
	ep := httpEP(t, "--sse 127.0.0.1:0")
	ep.ProtocolVersion = messages.Protocol20260728
	e := dialErr(t, ep)
	wantErr(t, "pinned 2026-07-28 against legacy SSE", e, messages.KindInitFailed, "HTTP 405")
}

// TestCloseEndsRequestsInFlight: Close ends every request in flight as
// disconnected, before ConnClosed, on every transport.
func TestCloseEndsRequestsInFlight(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(t *testing.T) messages.Endpoint{
		"stdio":  func(t *testing.T) messages.Endpoint { return stdioEP(t, "") },
		"socket": func(t *testing.T) messages.Endpoint { return socketEP(t, "") },
		"http":   func(t *testing.T) messages.Endpoint { return httpEP(t, "--http 127.0.0.1:0") },
		"sse":    func(t *testing.T) messages.Endpoint { return httpEP(t, "--sse 127.0.0.1:0") },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, _ := dial(t, open(t))
			hang := c.send("tools/call", json.RawMessage(`{"name":"hang","arguments":{},"_meta":{"progressToken":"p"}}`))
			c.rec.await(t, c.ctx, "hang's progress", isNote("notifications/progress"))
			slow := c.send("tools/call", toolParams("slow", map[string]any{"ms": 60000}))
			if cc := c.close(); cc.Err != nil {
				t.Errorf("ConnClosed.Err = %v after Close", cc.Err)
			}
			for _, id := range []messages.OpID{hang, slow} {
				wantErr(t, fmt.Sprint("op ", id), c.result(id).Err, messages.KindDisconnected)
			}
			wantErr(t, "Send after Close", callTool(t, c, "echo", map[string]any{"message": "x"}).Err, messages.KindDisconnected)
		})
	}
}

// TestConcurrentRequests: many requests in flight at once on one connection
// each get their own answer.
func TestConcurrentRequests(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(t *testing.T) messages.Endpoint{
		"stdio": func(t *testing.T) messages.Endpoint { return stdioEP(t, "") },
		"http":  func(t *testing.T) messages.Endpoint { return httpEP(t, "--http 127.0.0.1:0") },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, _ := dial(t, open(t))
			ids := map[messages.OpID]string{}
			for i := range 40 {
				msg := fmt.Sprint("message ", i)
				ids[c.send("tools/call", toolParams("echo", map[string]any{"message": msg}))] = msg
			}
			for id, msg := range ids {
				if got := toolText(t, c.result(id)); got != "echo: "+msg {
					t.Errorf("op %d = %q, want %q", id, got, "echo: "+msg)
				}
			}
		})
	}
}

// TestRequestErrors: JSON-RPC errors keep their code; bad params are the
// caller's fault; a tool error is a result, not an error.
func TestRequestErrors(t *testing.T) {
	t.Parallel()
	legacy, _ := dial(t, stdioEP(t, ""))
	res := call(t, legacy, "no/such/method", nil)
	wantErr(t, "unknown method", res.Err, messages.KindRPC, "-32601")
	if res.Err != nil && res.Err.RPCCode != -32601 {
		t.Errorf("RPCCode = %d", res.Err.RPCCode)
	}
	res = callTool(t, legacy, "fail", nil)
	if res.Err != nil || !strings.Contains(string(res.Result), `"isError":true`) {
		t.Errorf("fail tool = %s, %v; want an isError result", res.Result, res.Err)
	}

	ep := stdioEP(t, "")
	ep.ProtocolVersion = messages.Protocol20260728
	modern, _ := dial(t, ep)
	wantErr(t, "array params", call(t, modern, "tools/list", json.RawMessage(`[1]`)).Err, messages.KindInvalidArgs)
	huge := json.RawMessage(`{"x":"` + strings.Repeat("h", MaxFrame) + `"}`)
	wantErr(t, "huge params", call(t, modern, "tools/list", huge).Err, messages.KindInvalidArgs, "16 MiB")
	echo(t, modern, "still fine")

	e := dialErr(t, messages.Endpoint{})
	wantErr(t, "empty endpoint", e, messages.KindConfig)
}
