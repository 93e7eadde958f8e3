package supervisor

import (
	"fmt"
	"time"

	"github.com/mcprt/mcprt/messages"
)

// Dialed reports the outcome of the dial of generation gen (err nil on
// success).
func (l *Lifecycle) Dialed(now time.Time, gen uint64, err *messages.Error) []Effect {
	if gen != l.gen || l.phase != phaseConnecting {
		// An abandoned dial finished anyway: close what it opened.
		if err == nil {
			l.gens[gen] = &generation{closing: true, sent: true}
			return []Effect{CloseConn{Gen: gen}}
		}
		delete(l.gens, gen)
		return nil
	}
	if err != nil {
		delete(l.gens, gen)
		l.lastErr = err
		if l.forModel {
			l.failedAt = now
		}
		l.forModel = false
		effects := []Effect{FailWaiters{Err: err}}
		if l.keepsAlive() {
			l.phase = phaseBackoff
			return append(effects, l.arm(TimerReconnect, l.nextDelay()))
		}
		l.phase = phaseIdle
		return effects
	}
	l.phase = phaseConnected
	l.failedAt = time.Time{}
	l.forModel = false
	var effects []Effect
	if l.keepsAlive() {
		effects = append(effects, l.arm(TimerHealth, l.policy.HealthInterval))
	}
	if l.idleApplies() {
		effects = append(effects, l.arm(TimerIdle, l.policy.IdleTimeout))
	}
	return append(effects, ReleaseWaiters{Gen: gen})
}

// nextDelay is the wait before the next keep-alive reconnect: none for the
// first attempt after a healthy connection, then the backoff sequence.
func (l *Lifecycle) nextDelay() time.Duration {
	l.attempts++
	if l.attempts == 1 {
		return 0
	}
	return l.backoff.NextBackOff()
}

// Closed reports that generation gen ended; err is nil when it was closed
// on request.
func (l *Lifecycle) Closed(now time.Time, gen uint64, err *messages.Error) []Effect {
	g := l.gens[gen]
	delete(l.gens, gen)
	if gen != l.gen || l.phase != phaseConnected {
		return nil
	}
	effects := []Effect{l.disarm(TimerIdle), l.disarm(TimerHealth)}
	if g != nil && g.closing && err == nil {
		l.phase = phaseIdle
		return effects
	}
	if err == nil {
		err = messages.Errorf(messages.KindDisconnected, l.server, "connection closed")
	}
	l.lastErr = err
	if l.keepsAlive() {
		l.phase = phaseBackoff
		return append(effects, l.arm(TimerReconnect, l.nextDelay()))
	}
	l.phase = phaseIdle
	return effects
}

// Acquire records an operation starting on generation gen.
func (l *Lifecycle) Acquire(gen uint64) []Effect {
	g := l.gens[gen]
	if g == nil {
		return nil
	}
	g.leases++
	if g.leases == 1 && gen == l.gen && l.phase == phaseConnected && l.idleApplies() {
		return []Effect{l.disarm(TimerIdle)}
	}
	return nil
}

// Release records an operation on generation gen ending.
func (l *Lifecycle) Release(now time.Time, gen uint64) []Effect {
	g := l.gens[gen]
	if g == nil || g.leases == 0 {
		return nil
	}
	g.leases--
	if g.leases > 0 {
		return nil
	}
	if g.closing {
		if g.sent {
			return nil
		}
		g.sent = true
		return []Effect{CloseConn{Gen: gen}}
	}
	if gen == l.gen && l.phase == phaseConnected && l.idleApplies() {
		return []Effect{l.arm(TimerIdle, l.policy.IdleTimeout)}
	}
	return nil
}

// Fire reports that the timer of kind armed with token fired.
func (l *Lifecycle) Fire(now time.Time, kind TimerKind, token uint64) []Effect {
	if !l.timers[kind].Fired(token) {
		return nil // disarmed or re-armed since
	}
	switch kind {
	case TimerIdle:
		if l.phase == phaseConnected && l.Leases() == 0 && l.idleApplies() {
			return append([]Effect{l.disarm(TimerHealth)}, l.retire(l.gen)...)
		}
	case TimerHealth:
		if l.phase == phaseConnected {
			return []Effect{HealthCheck{Gen: l.gen}}
		}
	case TimerReconnect:
		if l.phase == phaseBackoff {
			return l.dial(false)
		}
	}
	return nil
}

// HealthDone reports a health check's outcome on generation gen.
func (l *Lifecycle) HealthDone(now time.Time, gen uint64, err *messages.Error) []Effect {
	if gen != l.gen || l.phase != phaseConnected {
		return nil
	}
	if err == nil {
		l.attempts = 0
		l.backoff.Reset()
		return []Effect{l.arm(TimerHealth, l.policy.HealthInterval)}
	}
	// The connection is up but not answering: replace it.
	l.lastErr = err
	effects := l.retire(gen)
	l.phase = phaseBackoff
	return append(effects, l.disarm(TimerIdle), l.arm(TimerReconnect, l.nextDelay()))
}

// Shutdown stops everything: waiting operations fail, the connection (and
// every retired one) closes, timers are disarmed.
func (l *Lifecycle) Shutdown() []Effect {
	if l.phase == phaseClosed {
		return nil
	}
	effects := []Effect{l.disarm(TimerIdle), l.disarm(TimerHealth), l.disarm(TimerReconnect)}
	if l.phase == phaseConnecting {
		effects = append(effects, CancelDial{Gen: l.gen},
			FailWaiters{Err: messages.Errorf(messages.KindShutdown, l.server, "the runtime is shutting down")})
		delete(l.gens, l.gen)
	}
	for _, gen := range l.sortedGens() {
		if g := l.gens[gen]; !g.sent {
			g.closing, g.sent = true, true
			effects = append(effects, CloseConn{Gen: gen})
		}
	}
	l.phase = phaseClosed
	return effects
}

// Open reports whether any connection is still open or closing.
func (l *Lifecycle) Open() bool { return len(l.gens) > 0 }

func (l *Lifecycle) sortedGens() []uint64 {
	out := make([]uint64, 0, len(l.gens))
	for gen := range l.gens {
		out = append(out, gen)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func backoffMessage(left time.Duration, last *messages.Error) string {
	secs := int((left + time.Second - 1) / time.Second)
	msg := fmt.Sprintf("connecting failed recently; not retrying for %d s", secs)
	if last != nil {
		msg += " (last error: " + last.Message + ")"
	}
	return msg
}
