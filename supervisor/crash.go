package supervisor

import (
	"time"

	"github.com/mcprt/mcprt/messages"
)

// CrashAction is what to do with an actor that crashed (panicked).
type CrashAction int

const (
	// CrashRestart restarts the actor after CrashDecision.Delay with the
	// state its record keeps.
	CrashRestart CrashAction = iota
	// CrashEnd ends the actor and what it owned, with a clear reason
	// (escalation: its owner sees it end, nothing is restarted).
	CrashEnd
)

// CrashDecision is the outcome of one crash.
type CrashDecision struct {
	Action CrashAction
	Delay  time.Duration
	// Recent counts the crashes of this actor within the policy's window,
	// this one included (0 for kinds that are never restarted).
	Recent int
	// Down is set for a server whose crashes exhausted the policy: it is
	// restarted straight into the down state.
	Down bool
}

// CrashPolicy decides, per actor kind, what a crash leads to. Servers,
// the events actor, subscriptions, batchers, a member's gateway and an
// attaching process's receiver restart with Restart's delays
// (100 ms·2^(n-1), capped); sessions, streams, observers and attached
// sessions end. When a server's crashes exhaust Restart (a 6th within
// 60 s) it restarts down; the events actor, a subscription and a receiver
// end (the companion stops; the subscription fails; the attached session
// fails, every caller answered); a batcher and a gateway keep restarting
// at the capped delay, since ending a batcher would lose every later
// wakeup and ending a gateway would refuse every later attach while it
// holds no state a restart could not keep.
type CrashPolicy struct{ Restart RestartPolicy }

// Decide returns the decision for a crash of an actor of kind at now, given
// that actor's earlier crash times, and the history to keep.
func (p CrashPolicy) Decide(kind messages.ActorKind, history []time.Time, now time.Time) (CrashDecision, []time.Time) {
	switch kind {
	case messages.ActorSession, messages.ActorStream, messages.ActorObserver, messages.ActorAttachedSession:
		return CrashDecision{Action: CrashEnd}, nil
	}
	d, next := p.Restart.Decide(history, now)
	if !d.GiveUp {
		return CrashDecision{Action: CrashRestart, Delay: d.Delay, Recent: d.Recent}, next
	}
	switch kind {
	case messages.ActorServer:
		return CrashDecision{Action: CrashRestart, Down: true, Recent: d.Recent}, nil
	case messages.ActorBatcher, messages.ActorGateway:
		// Keep the window: the next crash within it waits the longest delay.
		return CrashDecision{Action: CrashRestart, Delay: p.Restart.MaxDelay, Recent: d.Recent}, keepRecent(history, now, p.Restart.Window)
	}
	return CrashDecision{Action: CrashEnd, Recent: d.Recent}, nil
}

func keepRecent(history []time.Time, now time.Time, window time.Duration) []time.Time {
	out := []time.Time{}
	for _, t := range history {
		if now.Sub(t) < window {
			out = append(out, t)
		}
	}
	return append(out, now)
}
