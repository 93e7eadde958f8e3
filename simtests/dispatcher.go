package simtests

import (
	"bytes"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
)

// Dispatcher is an actor.Dispatcher that never runs anything by itself:
// Schedule queues the activation and the simulation loop runs one at a time
// with Step, picking it with a seeded generator, or the oldest first when
// the dispatcher is FIFO.
type Dispatcher struct {
	// Yield makes every post the simulation goroutine makes wait first
	// until every other goroutine has blocked (synctest.Wait), as if the
	// Go scheduler preempted the simulation there: host goroutines woken by
	// an activation so far run in the middle of it (-yield).
	Yield bool

	mu sync.Mutex
	// The fields below are guarded by mu.
	queue    []func()
	rng      *rand.Rand // nil: FIFO
	stepping bool       // an activation is running
	simGID   uint64     // the goroutine running activations
	hazards  int        // Schedule calls from another goroutine during an activation
	steps    int

	// The post gate (gate.go).
	stackHi, stackLo uintptr        // the simulation goroutine's pinned stack
	held             []heldPost     // posts from other goroutines, waiting
	ranks            map[uint64]int // goroutine id -> host operation start order
	heldAll          int            // posts held
	midStep          int            // posts held that arrived during an activation
	moved            int            // the simulation's posts from off its pinned stack
}

// NewDispatcher returns a dispatcher choosing with the given seed; seed 0
// makes it FIFO.
func NewDispatcher(seed uint64) *Dispatcher {
	d := &Dispatcher{}
	d.Reseed(seed)
	return d
}

// Reseed makes the dispatcher choose with seed from now on (0: FIFO).
func (d *Dispatcher) Reseed(seed uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rng = nil
	if seed != 0 {
		d.rng = rand.New(rand.NewPCG(seed, seed^0x5eed))
	}
}

// Schedule queues an activation.
func (d *Dispatcher) Schedule(fn func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stepping && !d.fromSim() {
		d.hazards++
	}
	d.queue = append(d.queue, fn)
}

// Throughput is how many messages an activation handles before protoactor
// yields the processor with runtime.Gosched. It is effectively unbounded:
// a yield in the middle of an activation would let a host goroutine run
// then, and the interleaving would depend on the Go scheduler.
func (d *Dispatcher) Throughput() int { return math.MaxInt32 }

// Step runs one queued activation chosen by the seed (or the oldest), and
// reports whether there was one.
func (d *Dispatcher) Step() bool {
	d.mu.Lock()
	if len(d.queue) == 0 {
		d.mu.Unlock()
		return false
	}
	i := 0
	if d.rng != nil {
		i = d.rng.IntN(len(d.queue))
	}
	fn := d.queue[i]
	d.queue = append(d.queue[:i], d.queue[i+1:]...)
	d.stepping = true
	d.steps++
	d.mu.Unlock()
	fn()
	d.mu.Lock()
	d.stepping = false
	d.mu.Unlock()
	return true
}

// Pending returns how many activations are queued.
func (d *Dispatcher) Pending() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.queue)
}

// Hazards returns how many times another goroutine scheduled an activation
// while one was running: each is a point where the Go scheduler, not the
// seed, decided the order.
func (d *Dispatcher) Hazards() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.hazards
}

// Steps returns how many activations have run.
func (d *Dispatcher) Steps() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.steps
}

// goroutineID returns the calling goroutine's id, parsed from its stack
// header ("goroutine 17 [running]:").
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}
