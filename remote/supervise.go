package remote

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/supervisor"
)

// Supervision of the shared runtime's actors (docs/architecture.md,
// "Supervision"). A crash (a panic in an actor's turn: a bug's, or a host
// callback's the actor called) is decided by the pure
// supervisor.CrashPolicy, reported once to the host (a warning notice)
// and to the log, and executed here:
//
//   - the gateway's parent is a guardian (gatewayStrategy): it is resumed
//     after the policy's delay with its state (protoactor's own restart
//     would stop its children, every attached session); the attach it
//     crashed on is taken once more, or answered with a clear error when
//     that crashes too;
//   - an attached session's actor has the gateway as parent
//     (sessionStrategy): the policy ends it; it is resumed only to end its
//     session through the sessionEnd path, with "its actor crashed (…)";
//   - an attaching process's receiver has a guardian (receiverStrategy):
//     resumed after the delay, the message it crashed on taken once more
//     (a reply's caller gets an error when that crashes too); when its
//     crashes exhaust the policy the session fails, every caller answered.
//
// The crash-injection seam (ServeOptions.InjectCrash,
// AttachOptions.InjectCrash; tests and simulation only) is asked before
// every ordinary message of these actors.

// supervision is one process's supervision of its remote actors.
type supervision struct {
	policy supervisor.CrashPolicy
	clock  clock.Clock
	logger *slog.Logger
	inject messages.CrashInjector
	notify func(messages.Notice) // the host's Notify (nil: only the log)

	mu sync.Mutex
	// The fields below are guarded by mu.
	history map[string][]time.Time  // crash times, by actor id
	pending map[string]*pendingWake // resumes waiting for their delay, by actor id
	closed  bool                    // Close began: no notice, no delay
}

// pendingWake is a crashed actor waiting for its restart delay.
type pendingWake struct {
	timer clock.Timer
	sup   actor.Supervisor
	pid   *actor.PID
}

func newSupervision(clk clock.Clock, logger *slog.Logger, inject messages.CrashInjector, notify func(messages.Notice)) *supervision {
	return &supervision{policy: supervisor.CrashPolicy{Restart: supervisor.DefaultRestartPolicy}, clock: clk, logger: logger,
		inject: inject, notify: notify, history: map[string][]time.Time{}, pending: map[string]*pendingWake{}}
}

// crashRetry is a message an actor crashed on, posted to it again (once).
type crashRetry struct{ msg any }

// hostPanic is the panic value of a host callback (Host.Deliver or
// Notify, a client hook) that panicked in an actor's turn: a crash of
// that actor, whose message is not handed to the host again.
type hostPanic struct{ reason any }

func (h hostPanic) String() string { return fmt.Sprintf("the host's callback panicked: %v", h.reason) }

// asHostPanic, deferred around a call into the host, turns the host's
// panic into a hostPanic.
func asHostPanic() {
	if r := recover(); r != nil {
		panic(hostPanic{reason: r})
	}
}

// onCrash is an actor kind's own handling of its crash, in its turn,
// before protoactor suspends it: it notes what it must and says whether
// msg is to be taken again after the restart; retried is set when msg was
// already taken again once.
type onCrash func(c actor.ReceiverContext, msg any, retried bool, reason any) (retry bool)

// guard is the receiver middleware of an actor of kind: the
// crash-injection seam, and a crash's note and retry.
func (v *supervision) guard(kind messages.ActorKind, on onCrash) actor.ReceiverMiddleware {
	return func(next actor.ReceiverFunc) actor.ReceiverFunc {
		return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
			msg := env.Message
			r, retried := msg.(crashRetry)
			if retried {
				msg = r.msg
				env = actor.WrapEnvelope(msg)
			}
			defer func() {
				if p := recover(); p != nil {
					if on(c, msg, retried, p) && !retried && !lifecycleMessage(msg) {
						c.ActorSystem().Root.Send(c.Self(), crashRetry{msg: msg})
					}
					panic(p) // protoactor suspends the actor and asks its parent
				}
			}()
			if v.inject != nil && !lifecycleMessage(msg) && v.inject(kind) {
				panic(messages.InjectedCrash)
			}
			next(c, env)
		}
	}
}

// lifecycleMessage reports whether msg is one of protoactor's lifecycle
// messages, which the crash-injection seam is never asked about.
func lifecycleMessage(msg any) bool {
	switch msg.(type) {
	case *actor.Started, *actor.Stopping, *actor.Stopped, *actor.Restarting, *actor.Terminated:
		return true
	}
	return false
}

// decide applies the crash policy to a crash of the actor id of kind and
// reports it (what names the actor for the host).
func (v *supervision) decide(kind messages.ActorKind, id, what string, reason any) supervisor.CrashDecision {
	v.mu.Lock()
	d, h := v.policy.Decide(kind, v.history[id], v.clock.Now())
	if h == nil {
		delete(v.history, id)
	} else {
		v.history[id] = h
	}
	closed := v.closed
	v.mu.Unlock()
	var outcome string
	switch {
	case d.Action == supervisor.CrashRestart:
		outcome = fmt.Sprintf("restarting in %s", d.Delay)
	case d.Recent > 0:
		outcome = fmt.Sprintf("crashed %d times within %s; ended", d.Recent, v.policy.Restart.Window)
	default:
		outcome = "ended"
	}
	text := fmt.Sprintf("%s crashed (%s); %s", what, crashText(reason), outcome)
	v.logger.Warn("actor crashed", slog.String("kind", string(kind)), slog.String("what", text))
	if v.notify != nil && !closed {
		func() {
			defer func() {
				if r := recover(); r != nil {
					v.logger.Error("the host's Notify panicked", slog.String("reason", crashText(r)))
				}
			}()
			v.notify(messages.Notice{Level: messages.NoticeWarning, Text: text})
		}()
	}
	return d
}

// resumeAfter resumes the crashed child after delay, with its state (at
// once when Close has begun).
func (v *supervision) resumeAfter(sup actor.Supervisor, child *actor.PID, delay time.Duration) {
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		sup.ResumeChildren(child)
		return
	}
	if p := v.pending[child.Id]; p != nil {
		p.timer.Stop()
	}
	p := &pendingWake{sup: sup, pid: child}
	v.pending[child.Id] = p
	p.timer = v.clock.AfterFunc(delay, func() {
		v.mu.Lock()
		mine := v.pending[child.Id] == p
		if mine {
			delete(v.pending, child.Id)
		}
		v.mu.Unlock()
		if mine {
			sup.ResumeChildren(child)
		}
	})
	v.mu.Unlock()
}

// close stops every restart delay and resumes the actors waiting for one
// (whose queued messages are then answered before they stop); no notice
// is sent any more.
func (v *supervision) close() {
	v.mu.Lock()
	v.closed = true
	waiting := v.pending
	v.pending = map[string]*pendingWake{}
	v.mu.Unlock()
	for _, p := range waiting {
		p.timer.Stop()
		p.sup.ResumeChildren(p.pid)
	}
}

// crashText renders a panic value for a notice or an end reason, short.
func crashText(reason any) string {
	s := fmt.Sprint(reason)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
