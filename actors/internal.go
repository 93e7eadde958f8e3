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

// lifeTimer is a lifecycle timer firing.
type lifeTimer struct {
	incarnation uint64
	kind        supervisor.TimerKind
	token       uint64
}

// startupTimeout is the startup deadline of generation gen passing.
type startupTimeout struct {
	incarnation uint64
	gen         uint64
}

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
	// owed are the outcomes the port owed crashed incarnations (requests
	// and dials whose result had not arrived: server_unsettled.go).
	owed owed
	// memory is the failure memory of the last crashed incarnation's
	// lifecycle: the next incarnation's lifecycle starts from it.
	memory supervisor.Memory
}

// remember keeps a crashing incarnation's failure memory for the next.
func (r *serverRecord) remember(m supervisor.Memory) {
	r.mu.Lock()
	r.memory = m
	r.mu.Unlock()
}

// recall returns the failure memory the last crashed incarnation left.
func (r *serverRecord) recall() supervisor.Memory {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.memory
}

// handOver keeps conns, being closed by a crashed incarnation, and the
// outcomes the port still owes it, for the next incarnation.
func (r *serverRecord) handOver(conns map[uint64]messages.Conn, o owed) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(conns) > 0 {
		if r.closing == nil {
			r.closing = map[uint64]messages.Conn{}
		}
		maps.Copy(r.closing, conns)
	}
	r.owed.merge(o)
}

// takeOver returns the connections a crashed incarnation left closing and
// the outcomes it did not see.
func (r *serverRecord) takeOver() (map[uint64]messages.Conn, owed) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, o := r.closing, r.owed
	r.closing, r.owed = nil, owed{}
	return c, o
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

func (r *serverRecord) nextOp() messages.OpID {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastOp++
	return r.lastOp
}

func (r *serverRecord) revive() {
	r.mu.Lock()
	r.down = nil
	r.crashes = nil
	r.mu.Unlock()
}
