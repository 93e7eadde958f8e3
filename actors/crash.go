package actors

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/supervisor"
)

// Supervision of every actor kind (docs/architecture.md, "Supervision"):
// each actor has a parent under the root supervisor, and a crash (a panic
// in its turn, a bug's or a host callback's) is decided by the pure
// supervisor.CrashPolicy where it arrives: the root decides for servers
// and the events actor (through the guardian), the events actor for its
// subscriptions and batchers, a server actor's and a session actor's
// endOnCrash strategy for sessions, streams and observers. Each crash is
// reported to the host once.

// lifecycleMessage reports whether msg is one of protoactor's lifecycle
// messages, which the crash-injection seam is never asked about.
func lifecycleMessage(msg any) bool {
	switch msg.(type) {
	case *actor.Started, *actor.Stopping, *actor.Stopped, *actor.Restarting, *actor.Terminated:
		return true
	}
	return false
}

// maybeCrash panics when the crash-injection seam (simulation and tests
// only) asks for a crash of this message of an actor of kind.
func (e *env) maybeCrash(kind messages.ActorKind, msg any) {
	if e.inject != nil && !lifecycleMessage(msg) && e.inject(kind) {
		panic(messages.InjectedCrash)
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

// reportCrash tells the host (a notice) and the log about one crash and
// what was decided. Nothing reaches the host once Close has begun; a host
// whose Notify panics is only logged.
func (e *env) reportCrash(kind messages.ActorKind, server, what string, reason any, d supervisor.CrashDecision) {
	var outcome string
	switch {
	case d.Down:
		outcome = fmt.Sprintf("crashed %d times within the restart window; kept down until an explicit connect", d.Recent)
	case d.Action == supervisor.CrashRestart:
		outcome = fmt.Sprintf("restarting in %s", d.Delay)
	case d.Recent > 0:
		outcome = fmt.Sprintf("crashed %d times within the restart window; ended", d.Recent)
	default:
		outcome = "ended"
	}
	text := fmt.Sprintf("%s crashed (%s); %s", what, crashText(reason), outcome)
	e.logger.Warn("actor crashed", slog.String("kind", string(kind)), slog.String("server", server), slog.String("what", text))
	if e.notify == nil || e.closing.Load() {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			e.logger.Error("the host's Notify panicked", slog.String("reason", crashText(r)))
		}
	}()
	e.notify(messages.Notice{Level: messages.NoticeWarning, Server: server, Text: text})
}

// endOnCrash is the supervision strategy of server actors (for their
// sessions) and session actors (for their streams and observers): the
// policy ends them; the crashed actor ends what it owned with the reason
// it noted (see crashNote), and the host is told.
type endOnCrash struct {
	env  *env
	kind messages.ActorKind
}

// HandleFailure decides and stops the crashed child.
func (s *endOnCrash) HandleFailure(_ *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason, _ any) {
	kind := s.kind
	if kind == messages.ActorStream && strings.Contains(child.Id, "/observer") {
		kind = messages.ActorObserver
	}
	d, _ := s.env.crashPolicy.Decide(kind, nil, s.env.clock.Now())
	what := fmt.Sprintf("a protocol %s's actor", kind)
	s.env.reportCrash(kind, "", what, reason, d)
	sup.StopChildren(child)
}

// crashNote is a crash's panic value noted by the crashed actor itself
// (before protoactor's mailbox recovers it), so that when the policy
// stops it, it ends what it owned with that reason.
type crashNote struct{ reason any }

// note records the panic value r (a Receive's deferred recover calls it,
// then panics again with r so that protoactor supervises the crash).
func (n *crashNote) note(r any) { n.reason = r }
