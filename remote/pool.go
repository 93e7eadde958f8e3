package remote

import "sync"

// pool runs the member's tool calls on goroutines that are kept for the
// next call instead of ending: a call's path through the runtime is deep,
// and a fresh goroutine grows (copies) its stack several times on the way,
// which cost a quarter of a call goroutine's CPU (docs/performance.md).
// At most maxIdle goroutines wait for work; the others end after their
// call. close ends the waiting ones; it is called once no call can start.
type pool struct {
	jobs    chan func() // unbuffered: a send succeeds only to a waiting worker
	maxIdle int
	wg      *sync.WaitGroup // counts the workers (Server.calls)

	mu     sync.Mutex
	idle   int  // guarded by mu
	closed bool // guarded by mu
}

func newPool(maxIdle int, wg *sync.WaitGroup) *pool {
	return &pool{jobs: make(chan func()), maxIdle: maxIdle, wg: wg}
}

// run runs f on a waiting worker, or on a new one; false (f does not
// run) once the pool is closed.
func (p *pool) run(f func()) bool {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return false
	}
	select {
	case p.jobs <- f:
		p.mu.Unlock()
		return true
	default:
	}
	p.wg.Add(1)
	p.mu.Unlock()
	go p.work(f)
	return true
}

func (p *pool) work(f func()) {
	defer p.wg.Done()
	for {
		f()
		p.mu.Lock()
		if p.closed || p.idle >= p.maxIdle {
			p.mu.Unlock()
			return
		}
		p.idle++
		p.mu.Unlock()
		next, ok := <-p.jobs
		p.mu.Lock()
		p.idle--
		p.mu.Unlock()
		if !ok {
			return
		}
		f = next
	}
}

// close ends the waiting workers; later runs do nothing.
func (p *pool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		close(p.jobs)
	}
}
