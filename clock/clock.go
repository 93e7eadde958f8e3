package clock

import "time"

// Clock is the runtime's only source of time.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc arranges for f to run once, on a goroutine of the clock's
	// choosing, after d has passed. A d of zero or less fires as soon as
	// possible. The returned Timer stops it.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc.
type Timer interface {
	// Stop prevents the callback from running. It reports whether it did so;
	// false means the callback already ran, is running, or was stopped.
	Stop() bool
}

// Real is the wall clock. Its zero value is ready to use.
type Real struct{}

// Now returns the wall-clock time.
func (Real) Now() time.Time { return time.Now() }

// AfterFunc wraps time.AfterFunc.
func (Real) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Or returns c, or the wall clock when c is nil. Options structs use it so
// that a zero value means production.
func Or(c Clock) Clock {
	if c == nil {
		return Real{}
	}
	return c
}
