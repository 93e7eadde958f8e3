package simtests

import (
	"math"
	"sort"
	"testing/synctest"
	"unsafe"
)

// The post gate. The runtime's callers post to actors from their own
// goroutines: a host operation posts its first message when it starts,
// and some post again after a reply has woken them (Runtime.Connect lists
// after connecting, a call whose tool must be looked up lists and then
// calls, Close stops the root actor once the servers have stopped, a
// cancelled call posts its Abort). A reply wakes its caller from inside an
// activation. On one processor the woken goroutine normally runs only
// after the activation, when the simulation waits (synctest.Wait), but the
// Go scheduler may preempt the simulation goroutine at any point (sysmon
// does so to a goroutine that has held the processor for 10 ms, which a
// loaded machine makes likely whenever the OS deschedules the thread), and
// then the woken goroutine runs in the middle of the activation. Its post
// then lands in a mailbox whose activation is running, which handles it at
// once: the activation differs from the one a replay runs, and so does the
// trace (seeds 66, 486, 2712, 3854 and 6112 of the campaign did this under
// load).
//
// So the Dispatcher is also a protoactor mailbox middleware (the runtime
// adds it to every mailbox, see actors/env.go): MessagePosted runs on the
// posting goroutine before the message is queued, and holds every post
// from a goroutine other than the simulation's until the simulation
// releases it, which it does only while it waits between steps, one post
// at a time, in host operation start order (then, for goroutines that run
// no host operation, in goroutine id order). Where a host goroutine's post lands is then a function of the
// seed, whenever the Go scheduler lets the goroutine run.

// stackReserve is how much of the simulation goroutine's stack Pin counts
// as its own below the anchor: the activations' deepest frames stay far
// above it. NewWorld grows the stack past twice that first, and with the
// stack shrinking off (GODEBUG=gcshrinkstackoff=1, TestMain) the stack never shrinks, so it never
// moves.
const stackReserve = 512 << 10

// Pin records the simulation goroutine: anchor is the address of a local
// variable of the function that runs the whole simulation (the bubble's
// root), so every frame below it belongs to the simulation goroutine's
// stack. MessagePosted tells the simulation's own posts (made from a
// frame between anchor and anchor-stackReserve) from other goroutines'
// without the cost of reading the goroutine id. NewWorld has grown the
// stack already: growing it here would move it, anchor included.
func (d *Dispatcher) Pin(anchor uintptr) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.simGID = goroutineID()
	d.stackHi, d.stackLo = anchor, anchor-stackReserve
}

// growStack uses n pages of stack, so that the goroutine's stack is at
// least that large from then on.
//
//go:noinline
func growStack(n int) byte {
	var page [4096]byte
	page[n%len(page)] = byte(n)
	if n <= 1 {
		return page[0]
	}
	return growStack(n-1) + page[len(page)-1]
}

// onSimStack reports whether the caller runs on the simulation
// goroutine's pinned stack.
//
//go:noinline
func (d *Dispatcher) onSimStack() bool {
	var here byte
	at := uintptr(unsafe.Pointer(&here))
	return at > d.stackLo && at < d.stackHi
}

// fromSim reports whether the caller is the simulation goroutine.
func (d *Dispatcher) fromSim() bool {
	return d.onSimStack() || goroutineID() == d.simGID
}

// heldPost is a post the gate holds: its goroutine waits on release.
type heldPost struct {
	gid     uint64
	release chan struct{}
}

// MessagePosted implements actor.MailboxMiddleware: a post from another
// goroutine than the simulation's waits here until released.
func (d *Dispatcher) MessagePosted(any) {
	if d.onSimStack() {
		if d.Yield {
			synctest.Wait() // every goroutine woken so far runs until it blocks
		}
		return
	}
	gid := goroutineID()
	d.mu.Lock()
	if d.simGID == 0 || gid == d.simGID {
		// Not pinned (a world run outside a bubble's root), or the
		// simulation's stack is no longer where Pin found it.
		if d.stackHi != 0 {
			d.moved++
		}
		d.mu.Unlock()
		return
	}
	d.heldAll++
	if d.stepping {
		d.midStep++
	}
	h := heldPost{gid: gid, release: make(chan struct{})}
	d.held = append(d.held, h)
	d.mu.Unlock()
	<-h.release
}

// MessageReceived implements actor.MailboxMiddleware.
func (d *Dispatcher) MessageReceived(any) {}

// MailboxStarted implements actor.MailboxMiddleware.
func (d *Dispatcher) MailboxStarted() {}

// MailboxEmpty implements actor.MailboxMiddleware.
func (d *Dispatcher) MailboxEmpty() {}

// releaseNext lets the first held post in release order (see rank) go on,
// and reports whether there was one. Call it only while the simulation waits
// between steps, then wait (synctest.Wait) for the goroutine to block
// again.
func (d *Dispatcher) releaseNext() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.held) == 0 {
		return false
	}
	sort.Slice(d.held, func(i, j int) bool {
		ri, rj := d.rank(d.held[i].gid), d.rank(d.held[j].gid)
		return ri < rj || ri == rj && d.held[i].gid < d.held[j].gid
	})
	h := d.held[0]
	d.held = d.held[1:]
	close(h.release)
	return true
}

// rank is where a goroutine's posts come in the release order: a host
// operation's goroutine by the operation's start order, any other
// goroutine after them. Call with mu held.
func (d *Dispatcher) rank(gid uint64) int {
	if r, ok := d.ranks[gid]; ok {
		return r
	}
	return math.MaxInt
}

// hostGoroutine registers the calling goroutine as the one running the
// host operation started seq-th.
func (d *Dispatcher) hostGoroutine(seq int) {
	gid := goroutineID()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ranks == nil {
		d.ranks = map[uint64]int{}
	}
	d.ranks[gid] = seq
}

// Held returns how many posts the gate has held.
func (d *Dispatcher) Held() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.heldAll
}

// HeldMidStep returns how many posts the gate held that arrived while an
// activation was running: each is a point where, without the gate, the Go
// scheduler would have decided the interleaving.
func (d *Dispatcher) HeldMidStep() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.midStep
}

// StackMoved returns how many of the simulation's own posts came from
// outside its pinned stack (the stack grew past stackReserve and moved).
func (d *Dispatcher) StackMoved() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.moved
}
