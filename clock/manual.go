package clock

import (
	"container/heap"
	"sync"
	"time"
)

// Manual is a clock that moves only when told to. Timers fire in order of
// due time, ties broken by the order they were armed, so a test or a
// simulation that advances it sees the same sequence every run.
type Manual struct {
	mu sync.Mutex
	// The fields below are guarded by mu.
	now   time.Time
	seq   uint64
	queue timerHeap
}

// Epoch is where a Manual clock starts unless told otherwise: a fixed,
// recognisable instant, so traces never contain the real date.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// NewManual returns a manual clock reading start (Epoch when zero).
func NewManual(start time.Time) *Manual {
	if start.IsZero() {
		start = Epoch
	}
	return &Manual{now: start}
}

// Now returns the clock's current reading.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// AfterFunc arms a timer due d after the current reading.
func (m *Manual) AfterFunc(d time.Duration, f func()) Timer {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d < 0 {
		d = 0
	}
	m.seq++
	t := &manualTimer{m: m, due: m.now.Add(d), seq: m.seq, f: f, index: -1}
	heap.Push(&m.queue, t)
	return t
}

// Pending returns how many timers are armed and not yet fired or stopped.
func (m *Manual) Pending() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.queue)
}

// NextDue returns when the earliest armed timer is due, and false when none is.
func (m *Manual) NextDue() (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.queue) == 0 {
		return time.Time{}, false
	}
	return m.queue[0].due, true
}

// Advance moves the clock forward by d, firing every timer that falls due on
// the way, each with the clock reading its due time. Callbacks run on the
// caller's goroutine; timers they arm that fall due within the window fire
// too.
func (m *Manual) Advance(d time.Duration) {
	m.mu.Lock()
	end := m.now.Add(d)
	m.mu.Unlock()
	for m.fireOneBefore(end) {
	}
	m.mu.Lock()
	if end.After(m.now) {
		m.now = end
	}
	m.mu.Unlock()
}

// FireNext jumps the clock to the earliest armed timer and fires it (and only
// it). It reports false when no timer is armed.
func (m *Manual) FireNext() bool {
	m.mu.Lock()
	if len(m.queue) == 0 {
		m.mu.Unlock()
		return false
	}
	due := m.queue[0].due
	m.mu.Unlock()
	return m.fireOneBefore(due)
}

// fireOneBefore fires the earliest timer due at or before end, if any.
func (m *Manual) fireOneBefore(end time.Time) bool {
	m.mu.Lock()
	if len(m.queue) == 0 || m.queue[0].due.After(end) {
		m.mu.Unlock()
		return false
	}
	t := heap.Pop(&m.queue).(*manualTimer)
	if t.due.After(m.now) {
		m.now = t.due
	}
	m.mu.Unlock()
	t.f()
	return true
}

type manualTimer struct {
	m     *Manual
	due   time.Time
	seq   uint64
	f     func()
	index int // position in the heap, -1 when not queued; guarded by m.mu
}

// Stop removes the timer if it has not fired.
func (t *manualTimer) Stop() bool {
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	if t.index < 0 {
		return false
	}
	heap.Remove(&t.m.queue, t.index)
	return true
}

type timerHeap []*manualTimer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if !h[i].due.Equal(h[j].due) {
		return h[i].due.Before(h[j].due)
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(x any) {
	t := x.(*manualTimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	n := len(old)
	t := old[n-1]
	old[n-1] = nil
	t.index = -1
	*h = old[:n-1]
	return t
}
