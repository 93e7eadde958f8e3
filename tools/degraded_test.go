package tools

import (
	"strings"
	"testing"
)

// A server whose tools/list fails on a live connection (here: over the
// catalog's entry limit, and over its pagination-cursor limit) shows as
// degraded with the listing's error, and calls to its tools get that
// error, not tool_not_found; the other servers are not affected.
func TestDegradedAfterFailedListing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ flags, want string }{
		{"--extra-tools 1001", "more than the limit of 1000"},
		{"--page-size 1 --extra-tools 110", "more than 100 pagination cursors"},
	} {
		r := newRig(t, []string{"big", "ok"}, map[string]string{"big": tc.flags})
		if res := r.exec(`{"connect":"big"}`); !res.IsError || !strings.Contains(res.Text, tc.want) {
			t.Fatalf("%s: connect: %q", tc.flags, res.Text)
		}
		wantOK(t, r.exec(`{"tool":"ok_echo","args":{"message":"fine"}}`), "echo: fine")
		res := r.exec(`{}`)
		if !strings.Contains(res.Text, "⚠ big (degraded: tools listing failed: ") || !strings.Contains(res.Text, tc.want) ||
			!strings.Contains(res.Text, "MCP: 1/2 servers connected") || !strings.Contains(res.Text, "✓ ok (") {
			t.Fatalf("%s: status:\n%s", tc.flags, res.Text)
		}
		rows, _ := res.Details["servers"].([]ServerStatus)
		if len(rows) != 2 || rows[0].Status != "degraded" || !strings.Contains(rows[0].LastError, tc.want) {
			t.Fatalf("%s: status details %+v", tc.flags, rows)
		}
		for _, call := range []string{`{"tool":"big_echo","args":{"message":"x"}}`, `{"tool":"extra_000"}`} {
			res := r.exec(call)
			if !res.IsError || res.ErrorCode() == "tool_not_found" || !strings.Contains(res.Text, tc.want) || res.Details["server"] != "big" {
				t.Fatalf("%s: %s: %q (code %s, details %v)", tc.flags, call, res.Text, res.ErrorCode(), res.Details)
			}
		}
	}
}
