package messages

import "sync"

// Assist lets a caller that waits for its Request lend its goroutine to
// the connection port. A port whose requests block (an HTTP exchange) may
// offer a request's blocking work to the Assist of the Op it carries; the
// waiting caller then runs it itself, so the request goes out from the
// caller's goroutine and its outcome comes back on it, without handing the
// call to a worker goroutine and back (two goroutine switches, and on a
// machine with idle cores two thread wake-ups, per call).
//
// The caller must run every job it takes, and must Close the Assist when it
// stops waiting; a job offered and not yet taken then goes to the fallback
// given with it, so no offered work is ever lost.
//
// Concurrency contract: safe for concurrent use; Offer may be called from
// any goroutine, Wake, Take and Close from the waiting caller.
type Assist struct {
	mu       sync.Mutex
	job      func() // guarded by mu
	fallback func() // guarded by mu: runs job elsewhere if never taken
	closed   bool   // guarded by mu
	wake     chan struct{}
}

// NewAssist returns an open Assist.
func NewAssist() *Assist { return &Assist{wake: make(chan struct{}, 1)} }

// Offer hands job to the waiting caller. It returns false (and keeps
// nothing) when a is nil or closed, or already holds a job not yet taken:
// the port then runs job itself. If the caller stops waiting before taking
// job, fallback runs (on the caller's goroutine, from Close) and must run
// job elsewhere without blocking.
func (a *Assist) Offer(job, fallback func()) bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	if a.closed || a.job != nil {
		a.mu.Unlock()
		return false
	}
	a.job, a.fallback = job, fallback
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
	return true
}

// Wake is readable after an Offer; nil for a nil Assist (never readable).
func (a *Assist) Wake() <-chan struct{} {
	if a == nil {
		return nil
	}
	return a.wake
}

// Take returns the job offered and not yet taken, or nil.
func (a *Assist) Take() func() {
	a.mu.Lock()
	job := a.job
	a.job, a.fallback = nil, nil
	a.mu.Unlock()
	return job
}

// Close ends the caller's wait: later Offers return false, and the
// fallback of a job offered and not taken runs now.
func (a *Assist) Close() {
	if a == nil {
		return
	}
	a.mu.Lock()
	a.closed = true
	fallback := a.fallback
	a.job, a.fallback = nil, nil
	a.mu.Unlock()
	if fallback != nil {
		fallback()
	}
}
