package supervisor

import (
	"fmt"
	"time"
)

// Mode is a server's lifecycle mode.
type Mode int

const (
	// Lazy connects on first use and disconnects after the idle timeout.
	Lazy Mode = iota
	// Eager connects at start, never reconnects by itself, and is idle-closed
	// only when an idle timeout is set on it explicitly.
	Eager
	// KeepAlive connects at start, health-checks every HealthInterval,
	// reconnects with backoff, and is never idle-closed.
	KeepAlive
	// LazyKeepAlive connects on first use and then behaves as KeepAlive.
	LazyKeepAlive
)

var modeNames = [...]string{Lazy: "lazy", Eager: "eager", KeepAlive: "keep-alive", LazyKeepAlive: "lazy-keep-alive"}

// String returns the mode's configuration spelling.
func (m Mode) String() string {
	if m < 0 || int(m) >= len(modeNames) {
		return "unknown"
	}
	return modeNames[m]
}

// ParseMode reads a configuration value; "" means Lazy.
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return Lazy, nil
	}
	for m, n := range modeNames {
		if n == s {
			return Mode(m), nil
		}
	}
	return Lazy, fmt.Errorf("supervisor: unknown lifecycle %q (want lazy, eager, keep-alive or lazy-keep-alive)", s)
}

// Policy is the lifecycle configuration of one server.
type Policy struct {
	Mode Mode
	// IdleTimeout closes an unused connection after this long; 0 never does.
	// It applies to Lazy, to LazyKeepAlive before its first use, and to
	// Eager only when set explicitly (the caller passes 0 otherwise).
	IdleTimeout time.Duration
	// HealthInterval is the keep-alive health-check period (default 30 s).
	HealthInterval time.Duration
	// BackoffInitial and BackoffMax bound keep-alive reconnect delays
	// (defaults 30 s and 5 min, doubling in between).
	BackoffInitial, BackoffMax time.Duration
	// FailureMemory is how long a connect that failed on behalf of a model's
	// call is remembered (default 60 s).
	FailureMemory time.Duration
	// Disabled keeps the server configured but never connected.
	Disabled bool
}

// Defaults for Policy fields left at zero (IdleTimeout excepted: zero there
// means "never").
const (
	DefaultIdleTimeout    = 10 * time.Minute
	DefaultHealthInterval = 30 * time.Second
	DefaultHealthTimeout  = 5 * time.Second
	DefaultBackoffInitial = 30 * time.Second
	DefaultBackoffMax     = 5 * time.Minute
	DefaultFailureMemory  = 60 * time.Second
)

func (p Policy) withDefaults() Policy {
	if p.HealthInterval <= 0 {
		p.HealthInterval = DefaultHealthInterval
	}
	if p.BackoffInitial <= 0 {
		p.BackoffInitial = DefaultBackoffInitial
	}
	if p.BackoffMax <= 0 {
		p.BackoffMax = DefaultBackoffMax
	}
	if p.FailureMemory <= 0 {
		p.FailureMemory = DefaultFailureMemory
	}
	return p
}
