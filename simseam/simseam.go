package simseam

import (
	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/eventstream"
	"github.com/mcprt/mcprt/messages"
)

// Seams replace the runtime's production sources of time, randomness,
// scheduling and I/O. A zero field means production.
type Seams struct {
	// Clock is the source of all time and timers (default: the wall
	// clock).
	Clock clock.Clock
	// Rand is the source of every id the runtime makes (default:
	// crypto-seeded).
	Rand clock.Rand
	// Dispatcher runs every actor the runtime spawns (default: inline on
	// the goroutine that posted the message; actors never block, and this
	// saves two goroutine hand-offs per call). protoactor's dispatchers
	// satisfy it (actor.NewDefaultDispatcher(300) runs each activation on
	// a goroutine of its own).
	Dispatcher Dispatcher
	// Dialer is the asynchronous connection port between actors and MCP
	// I/O (default: real stdio, HTTP and socket transports).
	Dialer messages.Dialer
	// InjectCrash is asked, before every ordinary message an actor of the
	// runtime takes, with the actor's kind; true makes that message panic
	// as a bug would, and the crash policy handles it (docs/architecture.md,
	// "Supervision"). nil: no actor is ever asked.
	InjectCrash messages.CrashInjector
	// Events tunes the events companion's timers and budgets, and
	// EventBatch its wakeup batchers, which the events protocol fixes
	// (docs/events.md); tests shorten them. Zero fields take the defaults
	// (activation 15 s, watchdog 65 s, retries 1-16 s, 500 ms batches).
	Events     eventstream.Limits
	EventBatch eventstream.BatchLimits
}

// Dispatcher schedules actor activations: Schedule runs fn (now, or
// later on a goroutine of its choice), and Throughput is how many
// messages an activation may process before it yields. It has the method
// set of protoactor's actor.Dispatcher, so either satisfies the other,
// without mcprt's API naming protoactor.
type Dispatcher interface {
	Schedule(fn func())
	Throughput() int
}

// Get returns the seams s points at; nil means production (every field
// zero).
func Get(s *Seams) Seams {
	if s == nil {
		return Seams{}
	}
	return *s
}
