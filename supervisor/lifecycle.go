package supervisor

import (
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
)

// phase is the lifecycle's own state; the status a user sees is derived
// from it (see Lifecycle.State).
type phase int

const (
	phaseIdle phase = iota
	phaseConnecting
	phaseConnected
	phaseBackoff
	phaseDown
	phaseDisabled
	phaseClosed
)

// generation is one connection's bookkeeping.
type generation struct {
	leases  int  // in-flight operations holding it open
	closing bool // it is to close once leases reach zero
	sent    bool // CloseConn was emitted; its ConnClosed is expected
}

// Lifecycle decides, for one server, when to connect, when to close and
// when to retry. It is a pure state machine: see the package comment.
type Lifecycle struct {
	server string
	policy Policy

	phase     phase
	gen       uint64 // the newest generation dialed
	gens      map[uint64]*generation
	activated bool // LazyKeepAlive has been used once: it keeps alive now
	// forModel is set while the current dial has an OriginModel waiter; its
	// failure is then remembered.
	forModel bool

	failedAt time.Time       // failure memory; zero when none
	lastErr  *messages.Error // the last connect or connection error

	attempts int // reconnects since the connection was last healthy
	backoff  *backoff.ExponentialBackOff
	timers   [TimerReconnect + 1]clock.Slot // per TimerKind
}

// New returns the lifecycle of server under policy p.
func New(server string, p Policy) *Lifecycle {
	p = p.withDefaults()
	l := &Lifecycle{server: server, policy: p, gens: map[uint64]*generation{}}
	l.backoff = backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(p.BackoffInitial),
		backoff.WithMultiplier(2),
		backoff.WithMaxInterval(p.BackoffMax),
		backoff.WithRandomizationFactor(0),
		backoff.WithMaxElapsedTime(0),
		backoff.WithClockProvider(zeroClock{}),
	)
	if p.Disabled {
		l.phase = phaseDisabled
	}
	return l
}

// ContinueFrom makes the next generation gen+1. A restarted server actor
// calls it so that generation numbers never repeat for a server: traffic of
// a crashed incarnation's connections is then recognised as stale.
func (l *Lifecycle) ContinueFrom(gen uint64) {
	if gen > l.gen {
		l.gen = gen
	}
}

// zeroClock keeps backoff from reading the wall clock; with no maximum
// elapsed time it never needs a real one.
type zeroClock struct{}

func (zeroClock) Now() time.Time { return time.Time{} }

// keepsAlive reports whether keep-alive behaviour applies now.
func (l *Lifecycle) keepsAlive() bool {
	return l.policy.Mode == KeepAlive || (l.policy.Mode == LazyKeepAlive && l.activated)
}

// idleApplies reports whether an unused connection is closed after a while.
func (l *Lifecycle) idleApplies() bool {
	return l.policy.IdleTimeout > 0 && !l.keepsAlive()
}

// Gen returns the newest generation dialed (0 before the first).
func (l *Lifecycle) Gen() uint64 { return l.gen }

// Connected reports whether generation gen is the live connection.
func (l *Lifecycle) Connected(gen uint64) bool { return l.phase == phaseConnected && gen == l.gen }

// Leases returns the number of operations holding the current connection.
func (l *Lifecycle) Leases() int {
	if g := l.gens[l.gen]; g != nil {
		return g.leases
	}
	return 0
}

// LastError returns the last connect or connection error, if any.
func (l *Lifecycle) LastError() *messages.Error { return l.lastErr }

// FailedAt returns when a remembered connect failure happened (zero if none
// is remembered at now).
func (l *Lifecycle) FailedAt(now time.Time) time.Time {
	if l.remembered(now) {
		return l.failedAt
	}
	return time.Time{}
}

func (l *Lifecycle) remembered(now time.Time) bool {
	return !l.failedAt.IsZero() && now.Sub(l.failedAt) < l.policy.FailureMemory
}

// State is the status a user sees.
func (l *Lifecycle) State(now time.Time) messages.ServerState {
	switch l.phase {
	case phaseConnecting:
		return messages.StateConnecting
	case phaseConnected:
		return messages.StateConnected
	case phaseBackoff:
		return messages.StateBackoff
	case phaseDown:
		return messages.StateDown
	case phaseDisabled:
		return messages.StateDisabled
	case phaseClosed:
		return messages.StateClosed
	}
	if l.remembered(now) {
		return messages.StateFailed
	}
	return messages.StateIdle
}

// Start is called once when the runtime starts: eager and keep-alive
// servers connect now.
func (l *Lifecycle) Start(now time.Time) []Effect {
	if l.phase != phaseIdle || (l.policy.Mode != Eager && l.policy.Mode != KeepAlive) {
		return nil
	}
	return l.dial(false)
}

// SetDown keeps the server down after its actor crashed too often; only an
// explicit Connect revives it.
func (l *Lifecycle) SetDown(err *messages.Error) {
	if l.phase != phaseDisabled && l.phase != phaseClosed {
		l.phase = phaseDown
		l.lastErr = err
	}
}

func (l *Lifecycle) dial(forModel bool) []Effect {
	l.gen++
	l.gens[l.gen] = &generation{}
	l.phase = phaseConnecting
	l.forModel = forModel
	return []Effect{Dial{Gen: l.gen}}
}

func (l *Lifecycle) arm(kind TimerKind, after time.Duration) Effect {
	return Arm{Kind: kind, After: after, Token: l.timers[kind].Arm()}
}

func (l *Lifecycle) disarm(kind TimerKind) Effect {
	l.timers[kind].Disarm() // a firing already queued is now stale
	return Disarm{Kind: kind}
}

// Use asks for a connection on behalf of an operation from origin.
func (l *Lifecycle) Use(now time.Time, origin messages.Origin) (Decision, []Effect) {
	switch l.phase {
	case phaseClosed:
		return Decision{Err: messages.Errorf(messages.KindShutdown, l.server, "the runtime is shutting down")}, nil
	case phaseDisabled:
		return Decision{Err: messages.Errorf(messages.KindServerDisabled, l.server, "server is disabled in the configuration")}, nil
	case phaseDown:
		if origin != messages.OriginExplicit {
			return Decision{Err: messages.Errorf(messages.KindServerFailed, l.server, "server crashed repeatedly and is kept down; connect it explicitly to retry")}, nil
		}
	case phaseConnected:
		if g := l.gens[l.gen]; g == nil || !g.closing {
			return Decision{Ready: true, Gen: l.gen}, nil
		}
		// The idle timeout retired the connection and its close is under
		// way: an operation sent into it would fail, so connect anew below.
	case phaseConnecting:
		if origin == messages.OriginModel {
			l.forModel = true
		}
		return Decision{Wait: true}, nil
	}
	if origin == messages.OriginModel && l.remembered(now) {
		left := l.policy.FailureMemory - now.Sub(l.failedAt)
		if l.lastErr != nil && l.lastErr.Kind == messages.KindAuthRequired {
			// Waiting would not help: the server needs credentials. Say so
			// again rather than "try later".
			e := *l.lastErr
			e.RetryAfter = left
			return Decision{Err: &e}, nil
		}
		return Decision{Err: &messages.Error{Kind: messages.KindServerBackoff, Server: l.server, RetryAfter: left,
			Message: backoffMessage(left, l.lastErr)}}, nil
	}
	if l.policy.Mode == LazyKeepAlive {
		l.activated = true
	}
	var effects []Effect
	if l.phase == phaseBackoff {
		effects = append(effects, l.disarm(TimerReconnect))
	}
	return Decision{Wait: true}, append(effects, l.dial(origin == messages.OriginModel)...)
}

// Connect is an explicit connect: it bypasses failure memory, revives a
// server kept down, and with fresh replaces a live connection (the old one
// closes once its in-flight operations end).
func (l *Lifecycle) Connect(now time.Time, fresh bool) (Decision, []Effect) {
	if l.phase == phaseConnected && fresh {
		old := l.gen
		effects := []Effect{l.disarm(TimerIdle), l.disarm(TimerHealth)}
		effects = append(effects, l.retire(old)...)
		l.phase = phaseIdle
		d, more := l.Use(now, messages.OriginExplicit)
		return d, append(effects, more...)
	}
	return l.Use(now, messages.OriginExplicit)
}

// retire marks generation gen for closing once its leases reach zero.
func (l *Lifecycle) retire(gen uint64) []Effect {
	g := l.gens[gen]
	if g == nil || g.closing {
		return nil
	}
	g.closing = true
	if g.leases == 0 {
		g.sent = true
		return []Effect{CloseConn{Gen: gen}}
	}
	return nil
}
