package transports

import (
	"encoding/json"
	"testing"
)

func TestRouterClaims(t *testing.T) {
	r := newRouter("mcprt-abc-", nil)
	var got []string
	cancelled := 0
	r.register("mcprt-abc-7", &route{
		methods:   map[string]bool{"notifications/events/event": true},
		deliver:   func(m string, p json.RawMessage) { got = append(got, m+" "+string(p)) },
		cancelled: func() { cancelled++ },
	})
	ev := json.RawMessage(`{"eventId":"1","_meta":{"io.modelcontextprotocol/subscriptionId":"mcprt-abc-7"}}`)
	cases := []struct {
		name   string
		method string
		params string
		want   bool
	}{
		{"declared, ours", "notifications/events/event", string(ev), true},
		{"undeclared method with our id continues", "notifications/progress", `{"_meta":{"io.modelcontextprotocol/subscriptionId":"mcprt-abc-7"}}`, false},
		{"no subscription id continues", "notifications/tools/list_changed", `{}`, false},
		{"another client's id continues", "notifications/events/event", `{"_meta":{"io.modelcontextprotocol/subscriptionId":"other-1"}}`, false},
		{"numeric id continues", "notifications/events/event", `{"_meta":{"io.modelcontextprotocol/subscriptionId":7}}`, false},
		{"late frame of ours is dropped", "notifications/events/event", `{"_meta":{"io.modelcontextprotocol/subscriptionId":"mcprt-abc-99"}}`, true},
		{"server cancels another request: continues", "notifications/cancelled", `{"requestId":"x-1"}`, false},
		{"server cancels our stream", "notifications/cancelled", `{"requestId":"mcprt-abc-7"}`, true},
		{"after the server's cancel, frames are late", "notifications/events/event", string(ev), true},
	}
	for _, c := range cases {
		if claimed := r.claim(c.method, json.RawMessage(c.params)); claimed != c.want {
			t.Fatalf("%s: claimed %v, want %v", c.name, claimed, c.want)
		}
	}
	if len(got) != 1 || got[0] != "notifications/events/event "+string(ev) {
		t.Fatalf("delivered %q", got)
	}
	if cancelled != 1 || r.late.Load() != 2 {
		t.Fatalf("cancelled %d, late %d", cancelled, r.late.Load())
	}
}
