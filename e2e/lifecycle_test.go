package e2e

import (
	"testing"
	"time"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/messages"
)

// Configured lifecycles through the embedding API: settings.idleTimeout
// closes an idle lazy server but not an eager one, which is idle-closed only
// by an idleTimeout set on itself; neither connects because of status.
func TestConfiguredIdleTimeouts(t *testing.T) {
	t.Parallel()
	one := 1.0
	eager, eagerOwn := selfServer(t, ""), selfServer(t, "")
	eager.Lifecycle, eagerOwn.Lifecycle = "eager", "eager"
	eagerOwn.IdleTimeout = &one
	r := newRigFile(t, &config.File{Settings: config.Settings{IdleTimeout: &one},
		MCPServers: map[string]config.Server{"lazy": selfServer(t, ""), "eager": eager, "eager-own": eagerOwn}})
	for _, name := range []string{"eager", "eager-own"} {
		if res := r.dialer.WaitResult(r.ctx, t, name, 1); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	if st := r.status("lazy"); st.State != messages.StateIdle || r.dialer.DialCount("lazy") != 0 {
		t.Fatalf("lazy server before use: %+v", st)
	}
	wantOK(t, r.exec(r.ctx, `{"tool":"lazy_echo","args":{"message":"x"}}`), "echo: x")
	r.rt.ServerStatuses() // every lease is released and every idle timer armed
	r.clk.Advance(time.Minute)
	until(r.ctx, t, r.dialer.Signal(), "the idle closes", func() bool {
		return r.status("lazy").State == messages.StateIdle && r.status("eager-own").State == messages.StateIdle
	})
	if st := r.status("eager"); st.State != messages.StateConnected || st.Generation != 1 {
		t.Fatalf("settings.idleTimeout closed an eager server: %+v", st)
	}
}
