package remote

import (
	"sync"
	"time"

	"github.com/mcprt/mcprt/clock"
)

// The liveness timer of a session actor. The rules arm it with a new token
// on every message of the session (sessions.Arm), which used to stop the
// timer and start another each time: two timer operations and a closure
// per message. Now arming notes the token and the time, and one timer
// runs: when it fires and the session was heard from since it started, it
// starts again for what is left of the timeout from the last arming, on
// the timer's own goroutine (the actor may be blocked writing to a
// stalled session, which is just when the timer must act). When it finds
// the session silent for the whole timeout it tells the actor (expired,
// with the latest token, so the rules end the session).

// liveness is one session actor's timer.
type liveness struct {
	mu sync.Mutex
	// The fields below are guarded by mu.
	timer   clock.Timer
	beat    uint64    // the latest token
	armedAt time.Time // when it was armed last
	stopped bool
}

// arm notes token beat armed now; a timer starts when none runs.
func (a *sessionActor) arm(beat uint64) {
	l := &a.live
	now := a.srv.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	a.expiring.Store(false)
	l.beat, l.armedAt = beat, now
	if l.timer == nil {
		l.timer = a.srv.clock.AfterFunc(a.srv.opts.SessionTimeout, a.fired)
	}
}

// fired is the timer's firing, on the timer's goroutine.
func (a *sessionActor) fired() {
	l := &a.live
	now := a.srv.clock.Now()
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return
	}
	if left := l.armedAt.Add(a.srv.opts.SessionTimeout).Sub(now); left > 0 {
		l.timer = a.srv.clock.AfterFunc(left, a.fired) // heard from since
		l.mu.Unlock()
		return
	}
	beat := l.beat
	l.timer = nil // a later arming starts it again
	l.mu.Unlock()
	a.expiring.Store(true)
	a.srv.abortLink(a.client.Address)
	a.srv.n.sys.Root.Send(a.self, expired{beat: beat})
}

// stop stops the timer for good.
func (l *liveness) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
}
