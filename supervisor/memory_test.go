package supervisor

import (
	"testing"
	"time"

	"github.com/mcprt/mcprt/messages"
)

// A new lifecycle that takes back an earlier one's Memory (a restarted
// server actor's) answers server_backoff inside the failure window and
// continues the reconnect backoff where the earlier one stood.
func TestMemorySurvivesANewLifecycle(t *testing.T) {
	lazy := New("s", Policy{Mode: Lazy})
	lazy.Use(t0, messages.OriginModel)
	lazy.Dialed(t0, 1, boom(messages.KindConnectFailed))
	again := New("s", Policy{Mode: Lazy})
	again.ContinueFrom(1)
	again.Remember(lazy.Memory())
	now := t0.Add(20 * time.Second)
	d, eff := again.Use(now, messages.OriginModel)
	if d.Err == nil || d.Err.Kind != messages.KindServerBackoff || d.Err.RetryAfter != 40*time.Second || len(eff) != 0 {
		t.Fatalf("use within failure memory after a restart: %+v %s", d, render(eff))
	}
	if again.State(now) != messages.StateFailed || again.LastError() == nil {
		t.Fatalf("state %s, last error %v", again.State(now), again.LastError())
	}
	if fresh := New("s", Policy{Mode: Lazy}); fresh.State(now) != messages.StateIdle {
		t.Fatalf("a lifecycle without the memory: %s", fresh.State(now))
	}

	// Keep-alive: three failed reconnects (0 s, 30 s, 60 s); the next
	// delay is 2 min in the old lifecycle and in the new one alike.
	ka := New("s", Policy{Mode: KeepAlive})
	ka.Start(t0)
	ka.Dialed(t0, 1, nil)
	tok := reconnectToken(ka.Closed(t0, 1, boom(messages.KindDisconnected)))
	for gen := uint64(2); gen <= 3; gen++ {
		ka.Fire(t0, TimerReconnect, tok)
		tok = reconnectToken(ka.Dialed(t0, gen, boom(messages.KindConnectFailed)))
	}
	next := New("s", Policy{Mode: KeepAlive})
	next.ContinueFrom(3)
	next.Remember(ka.Memory())
	next.Start(t0)
	want := "fail-waiters connect_failed; arm reconnect 2m0s #1"
	expect(t, "restarted lifecycle's failed dial", next.Dialed(t0, 4, boom(messages.KindConnectFailed)), want)
	ka.Fire(t0, TimerReconnect, tok)
	expect(t, "old lifecycle's failed dial", ka.Dialed(t0, 4, boom(messages.KindConnectFailed)), "fail-waiters connect_failed; arm reconnect 2m0s #4")
}

// reconnectToken returns the token of the reconnect timer effects arm.
func reconnectToken(effects []Effect) uint64 {
	for _, e := range effects {
		if a, ok := e.(Arm); ok && a.Kind == TimerReconnect {
			return a.Token
		}
	}
	return 0
}
