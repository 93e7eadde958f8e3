package actors

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/supervisor"
)

// env is what every actor of one System shares: the seams and the
// protoactor system. It is read-only after System.Start.
type env struct {
	clock      clock.Clock
	rand       clock.Rand
	dialer     messages.Dialer
	dispatcher actor.Dispatcher
	system     *actor.ActorSystem
	root       *actor.PID
	catalog    *Catalog
	board      *statusBoard
	cache      *cacheWriter // nil without a cache file

	// Supervision (crash.go): the crash policy, the crash-injection seam
	// (nil in production), the host's Notify for crash reports, the log,
	// and whether Close has begun (nothing reaches the host then).
	crashPolicy supervisor.CrashPolicy
	inject      messages.CrashInjector
	notify      func(messages.Notice)
	logger      *slog.Logger
	closing     *atomic.Bool

	clientName, clientVersion string
	clientNote                func(messages.ClientNote)
}

// props builds the Props of every actor the runtime spawns, so that all of
// them run on the injected dispatcher. A dispatcher that is also an
// actor.MailboxMiddleware sees every message posted to every mailbox,
// before it is queued, on the posting goroutine: the simulator uses that to
// hold posts from goroutines other than its own until the activation
// running then has finished (see docs/simulation.md).
func (e *env) props(p actor.Producer, opts ...actor.PropsOption) *actor.Props {
	base := []actor.PropsOption{actor.WithDispatcher(e.dispatcher)}
	if mw, ok := e.dispatcher.(actor.MailboxMiddleware); ok {
		base = append(base, actor.WithMailbox(actor.Unbounded(mw)))
	}
	return actor.PropsFromProducer(p, append(base, opts...)...)
}

// send posts msg to pid from outside any actor's context.
func (e *env) send(pid *actor.PID, msg any) { e.system.Root.Send(pid, msg) }

// after posts msg to pid once d has passed on the injected clock.
func (e *env) after(d time.Duration, pid *actor.PID, msg any) clock.Timer {
	return e.clock.AfterFunc(d, func() {
		// The timer's own goroutine: a panic while posting (an actor runs
		// inline on the poster's goroutine, and protoactor recovers its
		// panics) must not reach the host either.
		defer func() {
			if v := recover(); v != nil && e.logger != nil {
				e.logger.Debug("recovered panic", "in", "timer callback", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			}
		}()
		e.send(pid, msg)
	})
}

// sinkFor is the connection port's Sink for an actor: outcomes become
// messages in its mailbox.
func (e *env) sinkFor(pid *actor.PID) messages.Sink {
	return func(msg any) { e.send(pid, msg) }
}
