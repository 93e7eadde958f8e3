package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/clock"
)

// timerSlot is an actor's single timer on the injected clock: arming it
// replaces what was armed.
type timerSlot struct{ t clock.Timer }

// arm posts msg to pid after d, replacing the armed timer.
func (s *timerSlot) arm(e *env, d time.Duration, pid *actor.PID, msg any) {
	s.stop()
	s.t = e.after(d, pid, msg)
}

// stop stops the armed timer, if any.
func (s *timerSlot) stop() {
	if s.t != nil {
		s.t.Stop()
		s.t = nil
	}
}
