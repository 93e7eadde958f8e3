package testkit

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/clock"
)

// TestTimeout bounds a test in wall time. Only a bug (a hang) reaches it.
const TestTimeout = 2 * time.Minute

// Ctx returns a context that ends after TestTimeout or with the test.
func Ctx(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), TestTimeout)
	t.Cleanup(cancel)
	return ctx
}

// Signal is a broadcast: Wait returns a channel that the next Notify
// closes. Its zero value is ready to use.
type Signal struct {
	mu sync.Mutex
	ch chan struct{} // guarded by mu
}

// Notify wakes everyone waiting.
func (s *Signal) Notify() {
	s.mu.Lock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
	s.mu.Unlock()
}

// Wait returns a channel closed by the next Notify.
func (s *Signal) Wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// Until blocks until cond holds, re-checking it whenever sig fires; it
// fails the test when ctx ends first.
func Until(ctx context.Context, t testing.TB, sig *Signal, what string, cond func() bool) {
	t.Helper()
	for {
		ch := sig.Wait()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// pollEvery is how often Poll re-checks.
const pollEvery = 5 * time.Millisecond

// Poll re-checks cond every few milliseconds, for state nothing announces
// (a file being written, a process leaving /proc); it fails the test when
// ctx ends first.
func Poll(ctx context.Context, t testing.TB, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		tick := make(chan struct{})
		timer := clock.Real{}.AfterFunc(pollEvery, func() { close(tick) })
		select {
		case <-tick:
		case <-ctx.Done():
			timer.Stop()
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Clock is a manual clock that records the duration of every timer armed
// on it, so a test can wait until the runtime has armed the timer it is
// about to fire.
type Clock struct {
	*clock.Manual
	sig Signal

	mu    sync.Mutex
	armed []time.Duration // every AfterFunc duration, in order; guarded by mu
	over  []bool          // per armed timer: fired or stopped; guarded by mu
}

// NewClock returns a recording manual clock at clock.Epoch.
func NewClock() *Clock { return &Clock{Manual: clock.NewManual(time.Time{})} }

// AfterFunc arms a timer on the manual clock and records it.
func (c *Clock) AfterFunc(d time.Duration, f func()) clock.Timer {
	c.mu.Lock()
	i := len(c.armed)
	c.armed = append(c.armed, d)
	c.over = append(c.over, false)
	tm := &recTimer{c: c, i: i}
	tm.Timer = c.Manual.AfterFunc(d, func() { c.end(i); f() })
	c.mu.Unlock()
	c.sig.Notify()
	return tm
}

// recTimer records when its timer is stopped.
type recTimer struct {
	clock.Timer
	c *Clock
	i int
}

func (t *recTimer) Stop() bool {
	ok := t.Timer.Stop()
	if ok {
		t.c.end(t.i)
	}
	return ok
}

func (c *Clock) end(i int) {
	c.mu.Lock()
	c.over[i] = true
	c.mu.Unlock()
	c.sig.Notify()
}

// PendingSince reports whether a timer of duration d armed after mark from
// is still pending: neither fired nor stopped.
func (c *Clock) PendingSince(from int, d time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := from; i < len(c.armed); i++ {
		if c.armed[i] == d && !c.over[i] {
			return true
		}
	}
	return false
}

// WaitNotPending waits until no timer of duration d armed after mark from
// is pending (see PendingSince).
func (c *Clock) WaitNotPending(ctx context.Context, t testing.TB, from int, d time.Duration) {
	t.Helper()
	Until(ctx, t, &c.sig, fmt.Sprintf("no pending %s timer", d), func() bool { return !c.PendingSince(from, d) })
}

// Mark returns how many timers have been armed so far.
func (c *Clock) Mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.armed)
}

// ArmedSince reports whether a timer of duration d was armed after mark
// from.
func (c *Clock) ArmedSince(from int, d time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := from; i < len(c.armed); i++ {
		if c.armed[i] == d {
			return true
		}
	}
	return false
}

// WaitArmed waits until a timer of duration d is armed after mark from and
// returns the mark just past it.
func (c *Clock) WaitArmed(ctx context.Context, t testing.TB, from int, d time.Duration) int {
	t.Helper()
	next := -1
	Until(ctx, t, &c.sig, fmt.Sprintf("a %s timer", d), func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i := from; i < len(c.armed); i++ {
			if c.armed[i] == d {
				next = i + 1
				return true
			}
		}
		return false
	})
	return next
}

// ProcGone reports whether pid has exited: no such process, or a zombie
// waiting for a parent that is not ours to reap it.
func ProcGone(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X')
}
