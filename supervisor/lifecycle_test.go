package supervisor

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/messages"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func render(effects []Effect) string {
	parts := make([]string, len(effects))
	for i, e := range effects {
		parts[i] = fmt.Sprint(e)
	}
	return strings.Join(parts, "; ")
}

func expect(t *testing.T, step string, got []Effect, want string) {
	t.Helper()
	if g := render(got); g != want {
		t.Fatalf("%s:\n got  %q\n want %q", step, g, want)
	}
}

func boom(kind messages.ErrorKind) *messages.Error {
	return messages.Errorf(kind, "s", "boom")
}

// lastToken returns the token of the last Arm in effects.
func lastToken(t *testing.T, effects []Effect) uint64 {
	t.Helper()
	for i := len(effects) - 1; i >= 0; i-- {
		if a, ok := effects[i].(Arm); ok {
			return a.Token
		}
	}
	t.Fatalf("no Arm in %s", render(effects))
	return 0
}

func TestLazyConnectIdleCloseReconnect(t *testing.T) {
	l := New("s", Policy{Mode: Lazy, IdleTimeout: DefaultIdleTimeout})
	expect(t, "start", l.Start(t0), "")
	d, eff := l.Use(t0, messages.OriginModel)
	if !d.Wait || d.Ready {
		t.Fatalf("first use: %+v", d)
	}
	expect(t, "first use", eff, "dial gen=1")
	d2, eff2 := l.Use(t0, messages.OriginModel)
	if !d2.Wait {
		t.Fatalf("second use during dial: %+v", d2)
	}
	expect(t, "single flight", eff2, "")
	eff = l.Dialed(t0, 1, nil)
	expect(t, "dialed", eff, "arm idle 10m0s #1; release-waiters gen=1")
	if l.State(t0) != messages.StateConnected {
		t.Fatalf("state %s", l.State(t0))
	}
	expect(t, "acquire", l.Acquire(1), "disarm idle")
	expect(t, "second acquire", l.Acquire(1), "")
	expect(t, "release one", l.Release(t0, 1), "")
	eff = l.Release(t0, 1)
	expect(t, "release last", eff, "arm idle 10m0s #3")
	expect(t, "stale idle firing", l.Fire(t0, TimerIdle, 1), "")
	expect(t, "idle fires", l.Fire(t0.Add(10*time.Minute), TimerIdle, lastToken(t, eff)), "disarm health; close gen=1")
	expect(t, "closed", l.Closed(t0, 1, nil), "disarm idle; disarm health")
	if l.State(t0) != messages.StateIdle {
		t.Fatalf("after idle close: %s", l.State(t0))
	}
	_, eff = l.Use(t0, messages.OriginModel)
	expect(t, "reuse", eff, "dial gen=2")
}

func TestIdleWaitsForLeases(t *testing.T) {
	l := New("s", Policy{Mode: Lazy, IdleTimeout: time.Minute})
	l.Use(t0, messages.OriginModel)
	eff := l.Dialed(t0, 1, nil)
	tok := lastToken(t, eff[:1])
	l.Acquire(1)
	expect(t, "idle fires with a lease", l.Fire(t0.Add(time.Minute), TimerIdle, tok), "")
	if !l.Connected(1) {
		t.Fatal("closed with a lease held")
	}
}

func TestZeroIdleTimeoutNeverCloses(t *testing.T) {
	l := New("s", Policy{Mode: Lazy})
	l.Use(t0, messages.OriginModel)
	expect(t, "dialed", l.Dialed(t0, 1, nil), "release-waiters gen=1")
	l.Acquire(1)
	expect(t, "release", l.Release(t0, 1), "")
}

func TestFailureMemoryOnlyForModelCalls(t *testing.T) {
	l := New("s", Policy{Mode: Lazy, IdleTimeout: time.Minute})
	l.Use(t0, messages.OriginModel)
	expect(t, "dial fails", l.Dialed(t0, 1, boom(messages.KindConnectFailed)), "fail-waiters connect_failed")
	if l.State(t0) != messages.StateFailed {
		t.Fatalf("state %s", l.State(t0))
	}
	d, eff := l.Use(t0.Add(10*time.Second), messages.OriginModel)
	if d.Err == nil || d.Err.Kind != messages.KindServerBackoff || d.Err.RetryAfter != 50*time.Second || len(eff) != 0 {
		t.Fatalf("model call inside memory: %+v %s", d, render(eff))
	}
	if !strings.Contains(d.Err.Message, "50 s") {
		t.Fatalf("message %q does not say the seconds left", d.Err.Message)
	}
	// Consumers with their own schedule and explicit connects still try.
	_, eff = l.Use(t0.Add(11*time.Second), messages.OriginInternal)
	expect(t, "internal use", eff, "dial gen=2")
	expect(t, "internal dial fails", l.Dialed(t0.Add(11*time.Second), 2, boom(messages.KindConnectFailed)), "fail-waiters connect_failed")
	if !l.FailedAt(t0.Add(12 * time.Second)).Equal(t0) {
		t.Fatal("an internal failure moved the remembered failure")
	}
	_, eff = l.Connect(t0.Add(12*time.Second), false)
	expect(t, "explicit connect", eff, "dial gen=3")
	l.Dialed(t0.Add(12*time.Second), 3, nil)
	if !l.FailedAt(t0.Add(13 * time.Second)).IsZero() {
		t.Fatal("a successful connect did not clear failure memory")
	}
	// Memory expires by itself after 60 s.
	l2 := New("s", Policy{Mode: Lazy})
	l2.Use(t0, messages.OriginModel)
	l2.Dialed(t0, 1, boom(messages.KindConnectFailed))
	if _, eff := l2.Use(t0.Add(60*time.Second), messages.OriginModel); render(eff) != "dial gen=2" {
		t.Fatalf("after 60 s: %s", render(eff))
	}
}

// A remembered auth failure is told as auth_required, not "try later":
// waiting would not help.
func TestFailureMemoryKeepsAuthRequired(t *testing.T) {
	l := New("s", Policy{Mode: Lazy})
	l.Use(t0, messages.OriginModel)
	l.Dialed(t0, 1, boom(messages.KindAuthRequired))
	d, eff := l.Use(t0.Add(5*time.Second), messages.OriginModel)
	if d.Err == nil || d.Err.Kind != messages.KindAuthRequired || d.Err.RetryAfter != 55*time.Second || len(eff) != 0 {
		t.Fatalf("model call after a 401: %+v %s", d, render(eff))
	}
}

func TestKeepAliveHealthAndBackoff(t *testing.T) {
	l := New("s", Policy{Mode: KeepAlive, IdleTimeout: time.Minute})
	expect(t, "start", l.Start(t0), "dial gen=1")
	eff := l.Dialed(t0, 1, nil)
	expect(t, "dialed", eff, "arm health 30s #1; release-waiters gen=1")
	expect(t, "health fires", l.Fire(t0, TimerHealth, 1), "health-check gen=1")
	expect(t, "health ok", l.HealthDone(t0, 1, nil), "arm health 30s #2")
	expect(t, "lease release never arms idle", append(l.Acquire(1), l.Release(t0, 1)...), "")
	eff = l.Closed(t0, 1, boom(messages.KindDisconnected))
	expect(t, "dropped", eff, "disarm idle; disarm health; arm reconnect 0s #1")
	if l.State(t0) != messages.StateBackoff {
		t.Fatalf("state %s", l.State(t0))
	}
	gen := uint64(1)
	var delays []string
	tok := lastToken(t, eff)
	for i := 0; i < 7; i++ {
		gen++
		expect(t, "reconnect fires", l.Fire(t0, TimerReconnect, tok), fmt.Sprintf("dial gen=%d", gen))
		eff = l.Dialed(t0, gen, boom(messages.KindConnectFailed))
		a := eff[len(eff)-1].(Arm)
		delays, tok = append(delays, a.After.String()), a.Token
	}
	if got := strings.Join(delays, " "); got != "30s 1m0s 2m0s 4m0s 5m0s 5m0s 5m0s" {
		t.Fatalf("backoff delays %s", got)
	}
	if !l.FailedAt(t0).IsZero() {
		t.Fatal("keep-alive's own reconnect failures entered failure memory")
	}
	gen++
	l.Fire(t0, TimerReconnect, tok)
	l.Dialed(t0, gen, nil)
	expect(t, "healthy again resets", l.HealthDone(t0, gen, nil), "arm health 30s #5")
	eff = l.Closed(t0, gen, boom(messages.KindDisconnected))
	if a := eff[len(eff)-1].(Arm); a.After != 0 {
		t.Fatalf("after a healthy period the first reconnect waits %s", a.After)
	}
}

func TestKeepAliveFailedHealthCheckReplacesConnection(t *testing.T) {
	l := New("s", Policy{Mode: KeepAlive})
	l.Start(t0)
	l.Dialed(t0, 1, nil)
	l.Acquire(1)
	expect(t, "health fails with a lease", l.HealthDone(t0, 1, boom(messages.KindRequestTimeout)), "disarm idle; arm reconnect 0s #1")
	expect(t, "reconnect", l.Fire(t0, TimerReconnect, 1), "dial gen=2")
	expect(t, "old lease ends", l.Release(t0, 1), "close gen=1")
	expect(t, "old conn closed", l.Closed(t0, 1, nil), "")
	expect(t, "new dial", l.Dialed(t0, 2, nil), "arm health 30s #2; release-waiters gen=2")
}

func TestEagerAndLazyKeepAlive(t *testing.T) {
	e := New("s", Policy{Mode: Eager})
	expect(t, "eager start", e.Start(t0), "dial gen=1")
	expect(t, "eager up", e.Dialed(t0, 1, nil), "release-waiters gen=1")
	expect(t, "eager drop: no reconnect", e.Closed(t0, 1, boom(messages.KindDisconnected)), "disarm idle; disarm health")
	if _, eff := e.Use(t0, messages.OriginModel); render(eff) != "dial gen=2" {
		t.Fatalf("eager use after drop: %s", render(eff))
	}
	ei := New("s", Policy{Mode: Eager, IdleTimeout: time.Minute})
	ei.Start(t0)
	expect(t, "eager with idle set", ei.Dialed(t0, 1, nil), "arm idle 1m0s #1; release-waiters gen=1")

	lk := New("s", Policy{Mode: LazyKeepAlive, IdleTimeout: time.Minute})
	expect(t, "lazy-keep-alive start", lk.Start(t0), "")
	lk.Use(t0, messages.OriginModel)
	expect(t, "activated", lk.Dialed(t0, 1, nil), "arm health 30s #1; release-waiters gen=1")
	if got := render(lk.Closed(t0, 1, boom(messages.KindDisconnected))); !strings.HasSuffix(got, "arm reconnect 0s #1") {
		t.Fatalf("lazy-keep-alive after use reconnects: %s", got)
	}
}

func TestExplicitFreshConnectDrainsOldGeneration(t *testing.T) {
	l := New("s", Policy{Mode: Lazy, IdleTimeout: time.Minute})
	l.Use(t0, messages.OriginModel)
	l.Dialed(t0, 1, nil)
	l.Acquire(1)
	d, eff := l.Connect(t0, true)
	if !d.Wait {
		t.Fatalf("fresh connect: %+v", d)
	}
	expect(t, "fresh connect", eff, "disarm idle; disarm health; dial gen=2")
	expect(t, "new gen up", l.Dialed(t0, 2, nil), "arm idle 1m0s #3; release-waiters gen=2")
	expect(t, "old lease ends: old closes", l.Release(t0, 1), "close gen=1")
	expect(t, "old closed", l.Closed(t0, 1, nil), "")
	if !l.Connected(2) {
		t.Fatal("closing the old generation touched the new one")
	}
	if d, _ := l.Connect(t0, false); !d.Ready || d.Gen != 2 {
		t.Fatalf("connect while connected: %+v", d)
	}
}

func TestDisabledDownAndShutdown(t *testing.T) {
	dis := New("s", Policy{Disabled: true})
	if d, _ := dis.Use(t0, messages.OriginModel); d.Err == nil || d.Err.Kind != messages.KindServerDisabled {
		t.Fatalf("disabled: %+v", d)
	}
	if dis.State(t0) != messages.StateDisabled {
		t.Fatalf("state %s", dis.State(t0))
	}
	down := New("s", Policy{})
	down.SetDown(boom(messages.KindServerFailed))
	if d, _ := down.Use(t0, messages.OriginModel); d.Err == nil || d.Err.Kind != messages.KindServerFailed {
		t.Fatalf("down: %+v", d)
	}
	if _, eff := down.Connect(t0, false); render(eff) != "dial gen=1" {
		t.Fatalf("explicit connect revives: %s", render(eff))
	}

	s := New("s", Policy{Mode: Lazy})
	s.Use(t0, messages.OriginModel)
	expect(t, "shutdown while dialing", s.Shutdown(), "disarm idle; disarm health; disarm reconnect; cancel-dial gen=1; fail-waiters shutdown")
	expect(t, "abandoned dial completes", s.Dialed(t0, 1, nil), "close gen=1")
	if d, _ := s.Use(t0, messages.OriginModel); d.Err == nil || d.Err.Kind != messages.KindShutdown {
		t.Fatalf("after shutdown: %+v", d)
	}
	c := New("s", Policy{Mode: Lazy})
	c.Use(t0, messages.OriginModel)
	c.Dialed(t0, 1, nil)
	c.Acquire(1)
	expect(t, "shutdown while connected", c.Shutdown(), "disarm idle; disarm health; disarm reconnect; close gen=1")
	expect(t, "lease ends after shutdown", c.Release(t0, 1), "")
	if !c.Open() {
		t.Fatal("connection forgotten before its ConnClosed")
	}
	c.Closed(t0, 1, nil)
	if c.Open() {
		t.Fatal("connection still open after ConnClosed")
	}
}

func TestParseMode(t *testing.T) {
	for _, m := range []Mode{Lazy, Eager, KeepAlive, LazyKeepAlive} {
		if got, err := ParseMode(m.String()); err != nil || got != m {
			t.Fatalf("round trip %s: %v %v", m, got, err)
		}
	}
	if _, err := ParseMode("sometimes"); err == nil {
		t.Fatal("unknown mode accepted")
	}
}

func TestRestartPolicy(t *testing.T) {
	p := DefaultRestartPolicy
	var h []time.Time
	var delays []string
	for i := 0; i < 5; i++ {
		d, next := p.Decide(h, t0.Add(time.Duration(i)*time.Second))
		if d.GiveUp {
			t.Fatalf("gave up at crash %d", i+1)
		}
		h = next
		delays = append(delays, d.Delay.String())
	}
	if got := strings.Join(delays, " "); got != "100ms 200ms 400ms 800ms 1.6s" {
		t.Fatalf("delays %s", got)
	}
	d, h2 := p.Decide(h, t0.Add(5*time.Second))
	if !d.GiveUp || h2 != nil {
		t.Fatalf("sixth crash within 60 s: %+v", d)
	}
	// Crashes spread over more than the window never give up.
	h = nil
	for i := 0; i < 20; i++ {
		d, next := p.Decide(h, t0.Add(time.Duration(i)*61*time.Second))
		if d.GiveUp || d.Delay != 100*time.Millisecond {
			t.Fatalf("spread crash %d: %+v", i, d)
		}
		h = next
	}
}

func TestUseDuringIdleCloseDialsAnew(t *testing.T) {
	l := New("s", Policy{Mode: Lazy, IdleTimeout: time.Minute})
	l.Use(t0, messages.OriginModel)
	eff := l.Dialed(t0, 1, nil)
	expect(t, "idle fires", l.Fire(t0.Add(time.Minute), TimerIdle, lastToken(t, eff[:1])), "disarm health; close gen=1")
	d, eff := l.Use(t0.Add(time.Minute), messages.OriginModel)
	if d.Ready || !d.Wait {
		t.Fatalf("a call during the idle close was sent into the closing connection: %+v", d)
	}
	expect(t, "dial anew", eff, "dial gen=2")
	expect(t, "old closes", l.Closed(t0.Add(time.Minute), 1, nil), "")
	expect(t, "new up", l.Dialed(t0.Add(time.Minute), 2, nil), "arm idle 1m0s #2; release-waiters gen=2")
}
