package transports

import (
	"encoding/json"
	"testing"

	"github.com/mcprt/mcprt/messages"
)

// TestCancel: Cancel ends one request the way its transport requires
// (notifications/cancelled on stdio, sockets and legacy SSE; abort of the
// one POST on Streamable HTTP, without notifications/cancelled), reports
// KindAborted, and leaves sibling requests and the connection alone.
func TestCancel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		open func(t *testing.T, env []string) messages.Endpoint
		wire bool // notifications/cancelled is the cancellation
	}{
		{"stdio", func(t *testing.T, env []string) messages.Endpoint { return stdioEP(t, "", env...) }, true},
		{"socket", func(t *testing.T, env []string) messages.Endpoint { return socketEP(t, "", env...) }, true},
		{"sse", func(t *testing.T, env []string) messages.Endpoint { return httpEP(t, "--sse 127.0.0.1:0", env...) }, true},
		{"http", func(t *testing.T, env []string) messages.Endpoint { return httpEP(t, "--http 127.0.0.1:0", env...) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env, cancelLog, noteLog := logFiles(t)
			c, _ := dial(t, tc.open(t, env))

			// hang reports progress once it runs, so the cancellation
			// reaches a request the server is handling.
			hang := c.send("tools/call", json.RawMessage(`{"name":"hang","arguments":{},"_meta":{"progressToken":"hang-1"}}`))
			c.rec.await(t, c.ctx, "hang's progress", isNote("notifications/progress"))
			sibling := c.send("tools/call", toolParams("slow", map[string]any{"ms": 300}))
			c.Cancel(hang)

			wantErr(t, "cancelled hang", c.result(hang).Err, messages.KindAborted)
			waitFileLine(t, c.ctx, cancelLog, "cancelled")
			if got := toolText(t, c.result(sibling)); got != "slept 300" {
				t.Errorf("sibling = %q", got)
			}
			c.Cancel(sibling) // finished: nothing happens
			c.Cancel(999)     // unknown: nothing happens
			echo(t, c, "after the cancellation")

			// The marker is sent after any cancellation notification.
			c.Notify("notifications/mcprt-marker", nil)
			waitFileLine(t, c.ctx, noteLog, "notifications/mcprt-marker")
			if tc.wire {
				waitFileLine(t, c.ctx, noteLog, "notifications/cancelled")
			}
			if cc := c.close(); cc.Err != nil {
				t.Errorf("ConnClosed.Err = %v after Close", cc.Err)
			}
			if !tc.wire && hasLine(noteLog, "notifications/cancelled") {
				t.Errorf("notifications/cancelled sent on Streamable HTTP")
			}
			results := map[messages.OpID]int{}
			for _, m := range c.rec.all() {
				if r, ok := m.(messages.OpResult); ok {
					results[r.ID]++
				}
			}
			for id, n := range results {
				if n != 1 {
					t.Errorf("op %d got %d results", id, n)
				}
			}
		})
	}
}

// TestCancelRightAfterSendReachesTheServer: a request cancelled the moment
// it was sent is still cancelled at the server. The cancellation is sent by
// the request's own goroutine after the request was written, so it can
// never overtake it (before that fix, some of these hang forever at the
// server under -race).
func TestCancelRightAfterSendReachesTheServer(t *testing.T) {
	t.Parallel()
	env, cancelLog, _ := logFiles(t)
	c, _ := dial(t, stdioEP(t, "", env...))
	const n = 30
	ids := make([]messages.OpID, n)
	for i := range ids {
		ids[i] = c.send("tools/call", toolParams("hang", nil))
		c.Cancel(ids[i])
	}
	for _, id := range ids {
		wantErr(t, "cancelled hang", c.result(id).Err, messages.KindAborted)
	}
	// Every hang handler ends by logging its cancellation; a request whose
	// cancellation overtook it would hang and never log.
	waitFileLines(t, c.ctx, cancelLog, "cancelled", n)
	c.close()
}
