package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/messages"
)

// A connect that failed on behalf of a model's call is remembered for 60 s:
// later model calls get server_backoff with the seconds left instead of a
// new attempt; an explicit mcprt.Runtime.Connect still tries; after 60 s a model
// call tries again; a successful connect forgets the failure. The server's
// command is a path that exists only once the test creates it.
func TestFailureMemory(t *testing.T) {
	t.Parallel()
	cmd := filepath.Join(t.TempDir(), "late-server")
	late := config.Server{Command: cmd, Env: testenv.TestServerEnv("--stdio")}
	r := newRig(t, map[string]config.Server{"late": late}, true)
	backoff := func(res mcprt.Result, secs int) {
		t.Helper()
		wantError(t, res, "server_backoff", "late")
		if got, _ := res.Details["retryAfterSeconds"].(int); got != secs {
			t.Fatalf("retryAfterSeconds = %v, want %d (%q)", res.Details["retryAfterSeconds"], secs, res.Text)
		}
		if !strings.Contains(res.Text, "not found") {
			t.Fatalf("backoff error does not carry the last error: %q", res.Text)
		}
	}

	wantError(t, r.exec(r.ctx, `{"server":"late"}`), "connect_failed", "late")
	if st := r.status("late"); st.State != messages.StateFailed || !st.FailedAt.Equal(r.clk.Now()) {
		t.Fatalf("after the failed connect: %+v", st)
	}
	r.clk.Advance(10 * time.Second)
	backoff(r.exec(r.ctx, `{"server":"late"}`), 50)
	backoff(r.exec(r.ctx, `{"tool":"echo","args":{"message":"x"}}`), 50)
	if n := r.dialer.DialCount("late"); n != 1 {
		t.Fatalf("%d dials inside the failure memory, want 1", n)
	}
	if res := r.exec(r.ctx, `{}`); !strings.Contains(res.Text, "✗ late (failed 10 s ago)") {
		t.Fatalf("status: %q", res.Text)
	}

	// An explicit connect bypasses the memory (and fails again here).
	if _, err := r.rt.Connect(r.ctx, "late", false); messages.KindOf(err) != messages.KindConnectFailed {
		t.Fatalf("explicit connect: %v", err)
	}
	if n := r.dialer.DialCount("late"); n != 2 {
		t.Fatalf("explicit connect made %d dials in all, want 2", n)
	}
	r.clk.Advance(49 * time.Second)
	backoff(r.exec(r.ctx, `{"server":"late"}`), 1)

	// 60 s after the remembered failure a model call tries again.
	r.clk.Advance(time.Second)
	wantError(t, r.exec(r.ctx, `{"server":"late"}`), "connect_failed", "late")
	if n := r.dialer.DialCount("late"); n != 3 {
		t.Fatalf("after 60 s: %d dials in all, want 3", n)
	}
	r.clk.Advance(time.Second)
	backoff(r.exec(r.ctx, `{"server":"late"}`), 59)

	// The server becomes available; the memory still holds for model calls,
	// and a successful explicit connect clears it.
	if err := os.Symlink(testenv.Self(t), cmd); err != nil {
		t.Fatal(err)
	}
	backoff(r.exec(r.ctx, `{"server":"late"}`), 59)
	if _, err := r.rt.Connect(r.ctx, "late", false); err != nil {
		t.Fatalf("explicit connect once the server exists: %v", err)
	}
	if st := r.status("late"); st.State != messages.StateConnected || !st.FailedAt.IsZero() {
		t.Fatalf("after a successful connect: %+v", st)
	}
	wantOK(t, r.exec(r.ctx, `{"tool":"echo","args":{"message":"x"}}`), "echo: x")
	if n := r.dialer.DialCount("late"); n != 4 {
		t.Fatalf("%d dials in all, want 4", n)
	}
}
