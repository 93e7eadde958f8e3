package simtests

import (
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/messages"
)

// The crash fault (issue 14): the campaign arms a crash of one actor kind,
// chosen by the seed, through the runtime's crash-injection seam
// (mcprt.Options.Sim.InjectCrash); the next ordinary message an actor of that
// kind takes panics, as a bug would. The crash policy handles it
// (docs/architecture.md, "Supervision") and the invariants must hold
// through it: nothing delivered twice, every event delivered or counted,
// every call answered once, Close returns. Answers and ends the crash
// explains are allowed (crashesFired).

// crashTotals counts the injected crashes over the whole test binary
// (TestSim reports it).
var crashTotals atomic.Int64

// crashKinds are the kinds the campaign crashes.
var crashKinds = []messages.ActorKind{messages.ActorServer, messages.ActorSession, messages.ActorStream,
	messages.ActorObserver, messages.ActorEvents, messages.ActorSubscription, messages.ActorBatcher}

// crashState is the world's armed crash and what fired.
type crashState struct {
	armed messages.ActorKind
	fired map[messages.ActorKind]int
	// serverAt is when a server actor's crash was last injected.
	serverAt time.Duration
}

// injectCrash is the runtime's InjectCrash seam: it runs inside
// activations, on the simulation goroutine.
func (w *World) injectCrash(kind messages.ActorKind) bool {
	if w.crash.armed == "" || kind != w.crash.armed {
		return false
	}
	w.crash.armed = ""
	if w.crash.fired == nil {
		w.crash.fired = map[messages.ActorKind]int{}
	}
	w.crash.fired[kind]++
	crashTotals.Add(1)
	if kind == messages.ActorServer {
		w.crash.serverAt = w.Now() + 1 // (never 0: 0 means none, even for a crash at time 0)
		// (Failure memory survives the restart: the record keeps it, so
		// invariant 6 holds through a crash; seed 12346,
		// failure_memory_crash.)
	}
	// Frames on their way to a crashed stream (an events subscription's
	// too) or session are lost: a sign of life the server sent may never
	// have reached the subscription (invariant 21).
	for name := range w.servers {
		w.inv.evShaky(name)
	}
	w.Tracef("! crash injected into a %s actor", kind)
	return true
}

// armCrash arms a crash of kind.
func (w *World) armCrash(kind messages.ActorKind) {
	w.crash.armed = kind
	w.Tracef("! crash armed: the next message of a %s actor", kind)
}

// crashesFired counts the injected crashes of kinds (every kind if none).
func (w *World) crashesFired(kinds ...messages.ActorKind) int {
	n := 0
	for k, c := range w.crash.fired {
		if len(kinds) == 0 {
			n += c
			continue
		}
		for _, x := range kinds {
			if k == x {
				n += c
			}
		}
	}
	return n
}

// maybeCrash arms a crash now and then (one step in 25), from its own
// generator so that the campaign's other draws stay as they were.
func (c *campaign) maybeCrash(r *rand.Rand) {
	if r.IntN(25) == 0 {
		c.w.armCrash(crashKinds[r.IntN(len(crashKinds))])
	}
}
