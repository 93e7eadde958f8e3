//go:build unix

package e2e

import (
	"testing"
)

// TestSharedChangesArePushed: a session's WatchTools and WatchStatus hear
// of the member's changes without asking. The test server announces a
// changed tool list (notifications/tools/list_changed); the member lists
// it again, and the session's WatchTools signals and its WatchStatus
// receives a snapshot after the first. Close closes both channels.
func TestSharedChangesArePushed(t *testing.T) {
	t.Parallel()
	m := startMember(t, nil)
	s := attach(t, m, nil)
	ctx := testCtx(t)
	status, stopStatus := s.WatchStatus()
	defer stopStatus()
	select {
	case <-status: // the status as it is now, at once
	case <-ctx.Done():
		t.Fatal("no first snapshot")
	}
	tools, stopTools := s.WatchTools()
	defer stopTools()
	if res := mcpCall(ctx, t, s, `{"server":"ts","tool":"notify","args":{}}`); res.IsError {
		t.Fatal(res.Text)
	}
	select {
	case <-tools:
	case <-ctx.Done():
		t.Fatal("WatchTools never signalled the member's new tool list")
	}
	select {
	case snap := <-status:
		if len(snap.Servers) == 0 {
			t.Errorf("the pushed snapshot lists no server: %+v", snap)
		}
	case <-ctx.Done():
		t.Fatal("WatchStatus got nothing after the first snapshot")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for range status { // drains the closing snapshot; ends when closed
	}
	for range tools {
	}
}
