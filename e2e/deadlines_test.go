package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testserver"
	"github.com/mcprt/mcprt/messages"
)

// The startup deadline (startupTimeoutMs, default 30 s) covers spawn through
// handshake: a server pinned to protocol 2026-07-28 whose process ignores
// server/discover never finishes starting; after 30 s the call fails with
// init_timeout and the child process is gone (reaped) by the time the
// abandoned dial reports back.
func TestStartupDeadline(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	stuck := pidWrapper(t, pidFile, "--ignore-unknown")
	stuck.ProtocolVersion = messages.Protocol20260728
	r := newRig(t, map[string]config.Server{"stuck": stuck}, true)
	mark := r.clk.Mark()
	ch := r.start(r.ctx, `{"server":"stuck"}`)
	r.clk.WaitArmed(r.ctx, t, mark, 30*time.Second)
	pid := readPid(r.ctx, t, pidFile)
	r.clk.Advance(30*time.Second - time.Millisecond)
	if st := r.status("stuck"); st.State != messages.StateConnecting {
		t.Fatalf("before the deadline: %s", st.State)
	}
	r.clk.Advance(time.Millisecond)
	res := r.recv(ch, "the listing")
	wantError(t, res, "init_timeout", "stuck")
	if !strings.Contains(res.Text, "startupTimeoutMs") {
		t.Fatalf("error does not name the setting: %q", res.Text)
	}
	if late := r.dialer.WaitResult(r.ctx, t, "stuck", 1); late.Err == nil || late.Conn != nil {
		t.Fatalf("the abandoned dial reported %+v", late)
	}
	if !procGone(pid) {
		t.Fatalf("the child %d of the abandoned dial is still running", pid)
	}
	if st := r.status("stuck"); st.State != messages.StateFailed || st.LastError == nil || st.LastError.Kind != messages.KindInitTimeout {
		t.Fatalf("after the deadline: %+v", st)
	}
}

// The call deadline (requestTimeoutMs) ends a tool call that does not
// answer with request_timeout, the server sees the call cancelled, and the
// connection stays usable. Listing the tools first is bounded by the catalog
// deadline, not by this one.
func TestCallDeadline(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "cancel.log")
	slow := selfServer(t, "", testserver.EnvCancelLog+"="+log)
	ms := int64(5000)
	slow.RequestTimeoutMs = &ms
	r := newRig(t, map[string]config.Server{"slow": slow}, true)
	r.dialer.SetProgress(true)
	ch := r.start(r.ctx, `{"tool":"hang"}`)
	r.dialer.WaitProgress(r.ctx, t, 1) // the server runs the call
	r.clk.Advance(5*time.Second - time.Millisecond)
	if st := r.status("slow"); st.Leases != 1 {
		t.Fatalf("the call ended before its deadline: %+v", st)
	}
	r.clk.Advance(time.Millisecond)
	res := r.recv(ch, "the hanging call")
	wantError(t, res, "request_timeout", "slow")
	if !strings.Contains(res.Text, "requestTimeoutMs") {
		t.Fatalf("error does not name the setting: %q", res.Text)
	}
	poll(r.ctx, t, "the server to see the cancellation", func() bool {
		data, _ := os.ReadFile(log)
		return strings.Contains(string(data), "cancelled")
	})
	wantOK(t, r.exec(r.ctx, `{"tool":"echo","args":{"message":"after"}}`), "echo: after")
	if st := r.status("slow"); st.Generation != 1 || r.dialer.DialCount("slow") != 1 {
		t.Fatalf("the timeout cost the connection: %+v", st)
	}
}
