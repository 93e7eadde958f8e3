package actors

import (
	"maps"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/supervisor"
)

// Plumbing messages private to this package: between the root supervisor
// and server actors, and from clock timers to their actor. The cross-package
// contract lives in package messages.

// acquireSlot asks the root for one of the concurrent start slots.
type acquireSlot struct {
	pid *actor.PID
	gen uint64
}

// releaseSlot returns a start slot.
type releaseSlot struct {
	pid *actor.PID
	gen uint64
}

// slotGranted tells a server actor it may dial generation gen now.
type slotGranted struct{ gen uint64 }

// lifeTimer is one of a server actor's timers firing (its core's
// TimerKind and token).
type lifeTimer struct {
	incarnation uint64
	kind        supervisor.TimerKind
	token       uint64
}

// relistRefresh asks a server actor for its core's Relist, in a message of
// its own.
type relistRefresh struct{ incarnation uint64 }

// restartChild restarts a crashed server actor after its delay.
type restartChild struct {
	rec *serverRecord
	sup actor.Supervisor
}

// shutdownAll asks the root to shut every server down.
type shutdownAll struct{ reply func() }

// serverShutdownDone reports one server actor finished shutting down.
type serverShutdownDone struct{ name string }

// serverRecord is what survives a server actor's restarts. The root owns
// it; the server actor reads and advances it. mu orders the two.
type serverRecord struct {
	cfg ServerConfig

	mu sync.Mutex
	// The fields below are guarded by mu.
	pid         *actor.PID
	incarnation uint64          // counts actor instances
	lastGen     uint64          // the highest connection generation used
	lastOp      messages.OpID   // the highest operation id used
	down        *messages.Error // set when the restart policy gave up
	crashes     []time.Time     // recent crash times, for the policy
	restarts    int
	// closing are the connections a crashed incarnation closed whose
	// ConnClosed had not arrived: the next incarnation waits for them
	// (shutdown must not return before they are reaped).
	closing map[uint64]messages.Conn
	// left is what else the crashed incarnation handed over: its failure
	// memory and its requests whose OpResult had not arrived.
	left supervisor.Handover
}

// handOver keeps conns, being closed by a crashed incarnation, and what its
// core left (supervisor.Handover), for the next incarnation.
func (r *serverRecord) handOver(conns map[uint64]messages.Conn, left supervisor.Handover) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(conns) > 0 {
		if r.closing == nil {
			r.closing = map[uint64]messages.Conn{}
		}
		maps.Copy(r.closing, conns)
	}
	r.left = left
}

// takeOver returns the connections a crashed incarnation left closing and
// what its core handed over.
func (r *serverRecord) takeOver() (map[uint64]messages.Conn, supervisor.Handover) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, h := r.closing, r.left
	r.closing = nil
	r.left.Sends, r.left.Dials = nil, nil // the memory stays until a later crash replaces it
	return c, h
}

// begin starts a new incarnation and returns its number, the generation
// and operation floors, and whether the server is kept down.
func (r *serverRecord) begin() (inc, gen uint64, op messages.OpID, down *messages.Error, restarts int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.incarnation++
	return r.incarnation, r.lastGen, r.lastOp, r.down, r.restarts
}

func (r *serverRecord) noteGen(gen uint64) {
	r.mu.Lock()
	if gen > r.lastGen {
		r.lastGen = gen
	}
	r.mu.Unlock()
}

// noteOp records the highest operation id an incarnation used.
func (r *serverRecord) noteOp(op messages.OpID) {
	r.mu.Lock()
	if op > r.lastOp {
		r.lastOp = op
	}
	r.mu.Unlock()
}

func (r *serverRecord) revive() {
	r.mu.Lock()
	r.down = nil
	r.crashes = nil
	r.mu.Unlock()
}
