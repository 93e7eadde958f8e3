// Package simtests runs the real runtime, started through mcprt.Start, on
// simulated seams: a dispatcher that queues actor activations for a seeded
// loop, a manual clock that jumps to the next timer when nothing is
// runnable, a seeded random source, and simulated MCP servers behind the
// connection port. The same seed gives the same byte-identical trace.
package simtests

import (
	"math/rand/v2"
	"sync"
)

// Dispatcher is an actor.Dispatcher that never runs anything by itself:
// Schedule queues the activation and the simulation loop picks the next
// one to run with a seeded generator.
type Dispatcher struct {
	mu    sync.Mutex
	queue []func() // guarded by mu
	rng   *rand.Rand
}

// NewDispatcher returns a dispatcher choosing with the given seed.
func NewDispatcher(seed uint64) *Dispatcher {
	return &Dispatcher{rng: rand.New(rand.NewPCG(seed, seed^0x5eed))}
}

// Schedule queues an activation.
func (d *Dispatcher) Schedule(fn func()) {
	d.mu.Lock()
	d.queue = append(d.queue, fn)
	d.mu.Unlock()
}

// Throughput is how many messages an activation handles before yielding.
func (d *Dispatcher) Throughput() int { return 300 }

// Step runs one queued activation chosen by the seed, and reports whether
// there was one.
func (d *Dispatcher) Step() bool {
	d.mu.Lock()
	if len(d.queue) == 0 {
		d.mu.Unlock()
		return false
	}
	i := d.rng.IntN(len(d.queue))
	fn := d.queue[i]
	d.queue = append(d.queue[:i], d.queue[i+1:]...)
	d.mu.Unlock()
	fn()
	return true
}

// Pending returns how many activations are queued.
func (d *Dispatcher) Pending() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.queue)
}
