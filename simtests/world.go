package simtests

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing/synctest"
	"time"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/simseam"
)

// Limits that turn a runaway simulation into an error instead of a hang.
const (
	maxSteps       = 1_000_000      // activations and timer firings per world
	maxRunInterval = 48 * time.Hour // virtual time one RunUntil may cover
	// maxInstantSteps bounds the activations one virtual instant may take:
	// more means the runtime spins (reconnecting in a loop, say) without
	// ever waiting on a timer.
	maxInstantSteps = 10_000
)

// World is one simulation: its seams, its simulated servers, the host
// driving the runtime, the invariant checker and the trace.
type World struct {
	Seed  uint64
	Clock *clock.Manual
	Rand  clock.Rand
	Disp  *Dispatcher
	Host  *Host

	servers  map[string]*Server
	order    []string // server names in configuration order
	inv      *checker
	rt       *mcprt.Runtime
	states   <-chan mcprt.StatusSnapshot // Runtime.WatchStatus (traceStates)
	shown    map[string]string           // each server's state as last traced
	steps    int
	instant  time.Duration // the virtual instant the last step ran at
	atOnce   int           // steps run at that instant
	closedAt time.Duration // when Close returned
	blocked  []*link       // links waiting for a stream credit (unblock)
	draining bool          // Drain is ending a failed run: violations no longer stop it
	crash    crashState    // the crash fault (crashes.go)
	shared   *sharedWorld  // the shared runtime's member and sessions (shared_*.go), or nil

	mu sync.Mutex
	// The fields below are guarded by mu.
	trace []string
	errs  []string
}

// NewWorld builds a world for seed. Seed 0 makes the dispatcher FIFO, the
// order scenario files use unless they ask for a seed. Call it on the
// goroutine that will run the simulation, then pin that goroutine's stack
// (Dispatcher.Pin): NewWorld grows the stack so that it does not move
// during the run.
func NewWorld(seed uint64) *World {
	growStack(2 * stackReserve / 4096)
	w := &World{Seed: seed, Clock: clock.NewManual(time.Time{}), Rand: clock.NewSeededRand(seed),
		Disp: NewDispatcher(seed), servers: map[string]*Server{}}
	w.Host = newHost(w)
	w.inv = newChecker(w)
	return w
}

// AddServer configures a simulated server; call it before Start.
func (w *World) AddServer(s *Server) {
	s.w = w
	w.servers[s.Name] = s
	w.order = append(w.order, s.Name)
}

// Server returns the simulated server called name, or nil.
func (w *World) Server(name string) *Server { return w.servers[name] }

// Runtime returns the runtime, nil before Start.
func (w *World) Runtime() *mcprt.Runtime { return w.rt }

// Start starts the real runtime with the four simulated seams and lets
// every activation Start queued run.
func (w *World) Start() error {
	cfg := &config.File{MCPServers: map[string]config.Server{}, Order: append([]string(nil), w.order...)}
	for _, name := range w.order {
		cfg.MCPServers[name] = w.servers[name].config()
	}
	rt, err := mcprt.Start(context.Background(), mcprt.Options{
		Config: cfg, Host: w.Host, ClientName: "mcprt-sim", ClientVersion: "0",
		Sim: &simseam.Seams{Clock: simClock{w}, Rand: w.Rand, Dispatcher: w.Disp, Dialer: w, InjectCrash: w.injectCrash},
	})
	if err != nil {
		return err
	}
	w.rt = rt
	w.Tracef("runtime started")
	// The watch is fed inside the activation that changes a server's
	// state (the status board's publish), on the simulation goroutine:
	// what it holds after a step is a function of the seed.
	w.states, _ = rt.WatchStatus()
	w.shown = map[string]string{}
	w.traceStates()
	return w.Settle()
}

// traceStates traces every server whose state, as the host's status
// snapshot tells it, changed since it was last traced.
func (w *World) traceStates() {
	if w.states == nil {
		return
	}
	select {
	case snap, ok := <-w.states:
		if !ok {
			w.states = nil
			return
		}
		for _, s := range snap.Servers {
			row := fmt.Sprintf("%s tools=%d", s.Status, s.ToolCount)
			if w.shown[s.Name] != row {
				w.shown[s.Name] = row
				w.Tracef("state %s %s", s.Name, row)
			}
		}
	default:
	}
}

// Now returns the virtual time elapsed since the clock's epoch.
func (w *World) Now() time.Duration { return w.Clock.Now().Sub(clock.Epoch) }

// Tracef appends a line to the trace, stamped with virtual time. Nothing
// is traced while Drain runs.
func (w *World) Tracef(format string, args ...any) {
	if w.draining {
		return
	}
	line := fmt.Sprintf("%9s %s", w.Now(), fmt.Sprintf(format, args...))
	w.mu.Lock()
	w.trace = append(w.trace, line)
	w.mu.Unlock()
}

// violate records a broken invariant; the run stops at the next step.
func (w *World) violate(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	w.Tracef("VIOLATION %s", msg)
	w.mu.Lock()
	w.errs = append(w.errs, fmt.Sprintf("at %s: %s", w.Now(), msg))
	w.mu.Unlock()
}

// Err returns the invariant violations so far, joined, or nil.
func (w *World) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.errs) == 0 {
		return nil
	}
	return errors.New(strings.Join(w.errs, "; "))
}

// Trace returns the whole trace.
func (w *World) Trace() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.trace, "\n") + "\n"
}

// Lines returns the trace lines from index from on, and the next index.
func (w *World) Lines(from int) ([]string, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.trace[from:]...), len(w.trace)
}

// quiet lets host goroutines run until they block, releasing the posts
// the gate holds one at a time (gate.go), then collects the host
// operations that finished, in the order they were started.
func (w *World) quiet() {
	synctest.Wait()
	for w.Disp.releaseNext() {
		synctest.Wait()
	}
	w.Host.collect()
	if w.shared != nil {
		w.shared.pump()
	}
	w.inv.bindings()
}

// step runs one activation, or when none is queued and fire is set, the
// earliest timer. It reports whether anything ran.
func (w *World) step(fire bool) (bool, error) {
	if err := w.Err(); err != nil && !w.draining {
		return false, err
	}
	if w.steps++; w.steps > maxSteps {
		return false, fmt.Errorf("simulation did not settle within %d steps", maxSteps)
	}
	if now := w.Now(); now != w.instant {
		w.instant, w.atOnce = now, 0
	} else if w.atOnce++; w.atOnce > maxInstantSteps && !w.draining {
		w.violate("livelock: more than %d activations at one virtual instant", maxInstantSteps)
		return false, w.Err()
	}
	if w.Disp.Step() {
		w.unblock()
		w.traceStates()
		return true, nil
	}
	if fire && w.Clock.FireNext() {
		w.unblock()
		w.traceStates()
		return true, nil
	}
	return false, nil
}

// unblock lets the links waiting for a stream credit go on once the
// stream's consumer has returned one (or the stream ended), in the order
// they began to wait. Each entry stands for one delivery the link owes
// (every push schedules one, and a delivery that finds no credit waits
// here instead), so a link can be here more than once: the first entry
// that finds a credit takes it for the head, and the others go on
// without taking another. By then the head may need none (the entry
// before delivered the credited frame and the next is a reply or the
// connection's end).
func (w *World) unblock() {
	kept := w.blocked[:0]
	for _, l := range w.blocked {
		if l.credit || l.outbox[0].credits == nil {
			w.Disp.Schedule(l.deliver)
			continue
		}
		if l.outbox[0].credits.TryAcquire() {
			l.credit = true
			w.Disp.Schedule(l.deliver)
			continue
		}
		kept = append(kept, l)
	}
	w.blocked = kept
}

// Settle runs queued activations until none is left, without moving time.
func (w *World) Settle() error {
	for {
		w.quiet()
		ran, err := w.step(false)
		if err != nil || !ran {
			w.quiet()
			return err
		}
	}
}

// RunUntil runs activations and, when none is runnable, fires the next
// timer, until done reports true. It fails when nothing can move and done
// is still false, or when done stays false for maxRunInterval.
func (w *World) RunUntil(done func() bool) error { return w.RunWithin(maxRunInterval, done) }

// RunWithin is RunUntil giving up after d of virtual time.
func (w *World) RunWithin(d time.Duration, done func() bool) error {
	limit := w.Clock.Now().Add(d)
	for {
		w.quiet()
		if err := w.Err(); err != nil && !w.draining {
			return err
		}
		if done() {
			return nil
		}
		if w.Clock.Now().After(limit) {
			return fmt.Errorf("still waiting after %s of virtual time", d)
		}
		ran, err := w.step(true)
		if err != nil {
			return err
		}
		if !ran {
			return errors.New("deadlock: nothing runnable, no timer armed, and the awaited condition is false")
		}
	}
}

// Advance runs the simulation for d of virtual time: activations, and
// every timer that falls due within d, in order.
func (w *World) Advance(d time.Duration) error {
	end := w.Clock.Now().Add(d)
	for {
		if err := w.Settle(); err != nil {
			return err
		}
		due, ok := w.Clock.NextDue()
		if !ok || due.After(end) {
			break
		}
		if _, err := w.step(true); err != nil {
			return err
		}
	}
	w.Clock.Advance(end.Sub(w.Clock.Now()))
	return w.Settle()
}

// Drain ends a run that failed part-way, so that its bubble can exit: it
// closes the runtime if that has not happened and runs until every host
// operation has returned, whatever else goes wrong. It returns the first
// problem it met, if any. The trace stops where the run failed: what
// happens while draining a broken run need not replay (an abandoned call
// may be answered aborted or shutdown at random, see docs/simulation.md).
func (w *World) Drain() error {
	w.Tracef("draining: the trace stops here")
	w.draining = true
	w.atOnce = 0
	if w.rt == nil {
		return nil
	}
	if w.Host.byID["close"] == nil {
		if err := w.Host.Close("close"); err != nil {
			return err
		}
	}
	return w.RunUntil(func() bool { return w.Host.Active() == 0 })
}
