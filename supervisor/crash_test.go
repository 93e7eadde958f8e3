package supervisor

import (
	"testing"
	"time"

	"github.com/mcprt/mcprt/messages"
)

func TestCrashPolicyPerKind(t *testing.T) {
	p := CrashPolicy{Restart: DefaultRestartPolicy}
	t0 := time.Unix(1000, 0)
	for _, k := range []messages.ActorKind{messages.ActorSession, messages.ActorStream, messages.ActorObserver, messages.ActorAttachedSession} {
		if d, _ := p.Decide(k, nil, t0); d.Action != CrashEnd {
			t.Errorf("%s: %+v, want end", k, d)
		}
	}
	for _, k := range []messages.ActorKind{messages.ActorServer, messages.ActorEvents, messages.ActorSubscription, messages.ActorBatcher,
		messages.ActorGateway, messages.ActorReceiver} {
		var h []time.Time
		var d CrashDecision
		want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond}
		for i, w := range want {
			d, h = p.Decide(k, h, t0.Add(time.Duration(i)*time.Second))
			if d.Action != CrashRestart || d.Delay != w || d.Recent != i+1 {
				t.Fatalf("%s crash %d: %+v, want restart after %s", k, i+1, d, w)
			}
		}
		d, h = p.Decide(k, h, t0.Add(5*time.Second))
		switch k {
		case messages.ActorServer:
			if d.Action != CrashRestart || !d.Down {
				t.Errorf("server 6th crash: %+v, want restart down", d)
			}
		case messages.ActorBatcher, messages.ActorGateway:
			if d.Action != CrashRestart || d.Delay != DefaultRestartPolicy.MaxDelay {
				t.Errorf("%s 6th crash: %+v, want restart after the capped delay", k, d)
			}
		default:
			if d.Action != CrashEnd {
				t.Errorf("%s 6th crash: %+v, want end", k, d)
			}
		}
		// Outside the window the budget is whole again.
		if d, _ := p.Decide(k, h, t0.Add(10*time.Minute)); d.Action != CrashRestart || d.Delay != 100*time.Millisecond {
			t.Errorf("%s after the window: %+v", k, d)
		}
	}
}
