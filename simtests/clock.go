package simtests

import (
	"time"

	"github.com/mcprt/mcprt/clock"
)

// simClock is the Clock the runtime gets: the world's manual clock, with
// every runtime timer's firing recorded in the trace. (The simulated
// servers arm their own timers on the manual clock directly; what those do
// is traced as port frames instead.)
type simClock struct{ w *World }

// Now returns the manual clock's reading.
func (c simClock) Now() time.Time { return c.w.Clock.Now() }

// AfterFunc arms a timer on the manual clock that traces its firing.
func (c simClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	armed := c.w.Now()
	return c.w.Clock.AfterFunc(d, func() {
		c.w.Tracef("timer fired (armed at %s for %s)", armed, d)
		f()
	})
}
