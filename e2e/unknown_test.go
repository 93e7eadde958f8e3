package e2e

import (
	"testing"

	"github.com/mcprt/mcprt/config"
)

// TestUnknownResponseCounted (issue 13 item 8): a response to a request the
// runtime never sent is ignored (the calls work) and counted in the
// server's status.
func TestUnknownResponseCounted(t *testing.T) {
	t.Parallel()
	r := newRig(t, map[string]config.Server{"stray": selfServer(t, "--stray-response")}, false)
	wantOK(t, r.exec(r.ctx, `{"tool":"stray_echo","args":{"message":"x"}}`), "echo: x")
	if n := r.status("stray").UnknownResponses; n != 1 {
		t.Errorf("UnknownResponses = %d, want 1", n)
	}
}
