package simtests

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing/synctest"
	"time"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
)

// World is one simulation: its seams, its simulated servers and the trace.
type World struct {
	Seed    uint64
	Clock   *clock.Manual
	Rand    clock.Rand
	Disp    *Dispatcher
	Servers map[string]*Server

	mu    sync.Mutex
	trace []string // guarded by mu
}

// NewWorld builds a world for seed.
func NewWorld(seed uint64) *World {
	return &World{Seed: seed, Clock: clock.NewManual(time.Time{}), Rand: clock.NewSeededRand(seed),
		Disp: NewDispatcher(seed), Servers: map[string]*Server{}}
}

// Tracef appends a line to the trace, stamped with virtual time.
func (w *World) Tracef(format string, args ...any) {
	line := fmt.Sprintf("%8s %s", w.Clock.Now().Sub(clock.Epoch), fmt.Sprintf(format, args...))
	w.mu.Lock()
	w.trace = append(w.trace, line)
	w.mu.Unlock()
}

// Trace returns the trace so far.
func (w *World) Trace() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.trace, "\n") + "\n"
}

// RunUntil runs the simulation until done reports true: host goroutines
// are let run until they block (synctest.Wait), then one queued activation
// runs, or, when none is queued, the clock jumps to the next timer. It
// returns an error when nothing can move and done is still false.
func (w *World) RunUntil(done func() bool) error {
	for steps := 0; ; steps++ {
		synctest.Wait()
		if done() {
			return nil
		}
		if steps > 1_000_000 {
			return fmt.Errorf("simulation did not settle after %d steps", steps)
		}
		if w.Disp.Step() {
			continue
		}
		if w.Clock.FireNext() {
			continue
		}
		return fmt.Errorf("deadlock: nothing runnable, no timer armed, and the awaited condition is false")
	}
}

// Dial implements messages.Dialer with the simulated servers.
func (w *World) Dial(req messages.DialRequest, sink messages.Sink) messages.Dialing {
	w.Tracef("dial %s gen=%d", req.Server, req.Gen)
	srv := w.Servers[req.Server]
	d := &simDialing{}
	w.Disp.Schedule(func() {
		if d.cancelled {
			sink(messages.DialResult{Server: req.Server, Gen: req.Gen, Err: messages.Errorf(messages.KindAborted, req.Server, "connect cancelled")})
			return
		}
		if srv == nil || srv.FailDial {
			w.Tracef("dial %s gen=%d failed", req.Server, req.Gen)
			sink(messages.DialResult{Server: req.Server, Gen: req.Gen, Err: messages.Errorf(messages.KindConnectFailed, req.Server, "connection refused (field url)")})
			return
		}
		c := &simConn{w: w, srv: srv, server: req.Server, gen: req.Gen, sink: sink}
		w.Tracef("dial %s gen=%d ok", req.Server, req.Gen)
		sink(messages.DialResult{Server: req.Server, Gen: req.Gen, Conn: c,
			Info: messages.ServerInfo{Transport: messages.TransportStdio, ProtocolVersion: messages.Protocol20251125, Name: srv.Name}})
	})
	return d
}

type simDialing struct{ cancelled bool }

func (d *simDialing) Cancel() { d.cancelled = true }

// sortedKeys renders a JSON object's keys in order, for traces.
func sortedKeys(raw json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return string(raw)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}
