package eventstream

import (
	"fmt"
	"time"

	"github.com/mcprt/mcprt/messages"
)

// Effect is something the owning actor must do. Effects come in the order
// they must run.
type Effect interface{ effect() }

// TimerKind names a timer. A subscription has one timer slot, shared by
// its activation, watchdog and retry timers (arming replaces what was
// armed); a batcher has its own flush slot.
type TimerKind int

// The timers.
const (
	// TimerActivation bounds the wait for a stream's acknowledgement.
	TimerActivation TimerKind = iota + 1
	// TimerWatchdog checks that an active stream is alive.
	TimerWatchdog
	// TimerRetry starts the next reconnect attempt.
	TimerRetry
	// TimerFlush ends a batch's window.
	TimerFlush
)

var timerNames = [...]string{TimerActivation: "activation", TimerWatchdog: "watchdog", TimerRetry: "retry", TimerFlush: "flush"}

// String names the timer for traces.
func (k TimerKind) String() string {
	if k <= 0 || int(k) >= len(timerNames) {
		return "timer?"
	}
	return timerNames[k]
}

// OpenStream sends an events/stream request with Params. Stream numbers
// the request within its subscription (1, 2, ...): the actor maps its own
// request id to it and reports the stream's frames and end with it.
//
// Retry is 0 for the first open and, for a reopen, the retry's number in
// the current recovery episode (1 to MaxRetries). A reopen is the
// subscription's reconnect: the actor sends it through its server's
// single-flight connect, so that the subscriptions of one server whose
// retries fall due while the connection is down share one reconnect (and,
// if that connect fails, each sees its stream end with an error, which
// costs each one attempt).
type OpenStream struct {
	Stream uint64
	Params StreamParams
	Retry  int
}

// CancelStream gives up on stream number Stream (on the wire, the
// transport's way). The subscription ignores the stream from now on.
type CancelStream struct{ Stream uint64 }

// Arm sets the timer Kind to fire After from now; the actor hands Token
// back with Fire. Arming a slot replaces its previous timer (the tokens are
// a clock.Slot's, as the supervisor's timers are).
type Arm struct {
	Kind  TimerKind
	After time.Duration
	Token uint64
}

// Disarm stops the timer slot holding Kind.
type Disarm struct{ Kind TimerKind }

// Deliver hands one event to the events batcher (after PrepareEvent).
type Deliver struct{ Item *EventItem }

// Wake hands a status change to the status batcher (after PrepareStatus):
// it will wake the model.
type Wake struct{ Status Snapshot }

// Notify shows Notice in the host's UI (Host.Notify); it never wakes the
// model.
type Notify struct{ Notice messages.Notice }

// Resolve answers the pending subscribe: the server acknowledged the first
// stream. Status is the subscription as the tool result renders it.
type Resolve struct{ Status Snapshot }

// Reject fails the pending subscribe: the subscription ended before its
// first acknowledgement. Err says why.
type Reject struct{ Err string }

func (OpenStream) effect()   {}
func (CancelStream) effect() {}
func (Arm) effect()          {}
func (Disarm) effect()       {}
func (Deliver) effect()      {}
func (Wake) effect()         {}
func (Notify) effect()       {}
func (Resolve) effect()      {}
func (Reject) effect()       {}

// String renders the open for traces: stream, cursor, maxAgeMs, retry.
func (e OpenStream) String() string {
	s := fmt.Sprintf("open #%d cursor=%s", e.Stream, e.Params.Cursor)
	if e.Params.MaxAgeMs != nil {
		s += fmt.Sprintf(" maxAgeMs=%d", *e.Params.MaxAgeMs)
	}
	if e.Retry > 0 {
		s += fmt.Sprintf(" retry=%d", e.Retry)
	}
	return s
}

// String renders the cancel for traces.
func (e CancelStream) String() string { return fmt.Sprintf("cancel #%d", e.Stream) }

// String renders the timer and its delay (not the token) for traces.
func (e Arm) String() string { return fmt.Sprintf("arm %s %s", e.Kind, e.After) }

// String renders the disarm for traces.
func (e Disarm) String() string { return fmt.Sprintf("disarm %s", e.Kind) }

// String renders the delivered event id (and replay_truncated) for traces.
func (e Deliver) String() string {
	s := fmt.Sprintf("deliver %s", e.Item.Event.EventID)
	if e.Item.ReplayTruncated {
		s += " replay_truncated"
	}
	return s
}

// String renders the woken status for traces.
func (e Wake) String() string { return "wake " + statusString(e.Status) }

// String renders the notice text for traces.
func (e Notify) String() string { return fmt.Sprintf("notify %q", e.Notice.Text) }

// String renders the resolved status for traces.
func (e Resolve) String() string { return "resolve " + statusString(e.Status) }

// String renders the rejection for traces.
func (e Reject) String() string { return fmt.Sprintf("reject %q", e.Err) }

// statusString is a one-line rendering of a snapshot for traces.
func statusString(s Snapshot) string {
	out := string(s.Status)
	if s.Truncated {
		out += " truncated"
	}
	if s.EndReason != "" {
		out += " " + string(s.EndReason)
	}
	if s.Error != "" {
		out += fmt.Sprintf(" %q", s.Error)
	}
	return out
}
