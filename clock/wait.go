package clock

import (
	"context"
	"time"
)

// Wait waits d on c, or until ctx ends, and reports whether d passed. A d
// of zero or less passes at once (unless ctx has ended).
func Wait(ctx context.Context, c Clock, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	done := make(chan struct{})
	timer := c.AfterFunc(d, func() { close(done) })
	select {
	case <-done:
		return true
	case <-ctx.Done():
		timer.Stop()
		return false
	}
}
