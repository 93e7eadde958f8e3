//go:build unix

package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/internal/testonly/testenv"
	"github.com/mcprt/mcprt/messages"
)

// TestSessionLossRecovers (issue 13 item 10): server-everything over
// Streamable HTTP restarts mid-run and answers the old session with 400 "No
// valid session ID". The call that hit the lost session fails as
// disconnected, saying so (not tool_error, not retried); the server does
// not stay connected on the dead session; the next call succeeds on a new
// session.
func TestSessionLossRecovers(t *testing.T) {
	t.Parallel()
	port := testenv.FreePort(t)
	first := testenv.StartEverythingAt(t, "streamableHttp", port)
	r := newRig(t, map[string]config.Server{"everything": {URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port)}}, true)
	call := `{"tool":"everything_echo","args":{"message":"%s"}}`
	wantOK(t, r.exec(r.ctx, fmt.Sprintf(call, "before")), "Echo: before")
	gen := r.status("everything").Generation

	pid := first.Cmd.Process.Pid
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-first.Exited()
	testenv.StartEverythingAt(t, "streamableHttp", port)

	res := r.exec(r.ctx, fmt.Sprintf(call, "lost"))
	wantError(t, res, messages.KindDisconnected.Code(), "everything")
	if !strings.Contains(res.Text, "lost the session") {
		t.Errorf("error %q does not say the session was lost", res.Text)
	}
	if n := r.dialer.DialCount("everything"); n != 1 {
		t.Errorf("%d dials before the next call; the failed call must not be retried on a new session", n)
	}
	wantOK(t, r.exec(r.ctx, fmt.Sprintf(call, "after")), "Echo: after")
	if s := r.status("everything"); s.Generation == gen {
		t.Errorf("still on generation %d after the session was lost", gen)
	}
}
