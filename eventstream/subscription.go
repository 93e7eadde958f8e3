package eventstream

import (
	"errors"
	"fmt"
	"time"

	"github.com/mcprt/mcprt/clock"
	"github.com/mcprt/mcprt/messages"
)

// ErrSpec: a subscription's Spec is invalid.
var ErrSpec = errors.New("eventstream: invalid subscription")

// maxSafeInteger is JavaScript's largest exact integer; max_age_ms above it
// is refused, as the reference does.
const maxSafeInteger = 1<<53 - 1

// Subscription is the state machine of one logical subscription
// (events-protocol.md (b)):
//
//	opening ──active──▶ active ◀──active── reconnecting ──retry──▶ (reopen)
//	   │                  │  ▲                   │
//	   │ timeout, end     │  └─ event/heartbeat  │ budget spent, terminal end
//	   ▼                  ▼ lost, watchdog       ▼
//	failed|ended|stopped  reconnecting ────▶ failed|ended|stopped
//
// It owns the logical id, the latest cursor, the dedupe window, the
// recovery episode and the reconnect budget; the actor owns the streams and
// the timer. Every method returns the effects to execute, in order; the
// returned slice is reused by the next call, so execute it before calling
// again. See docs/events.md for every transition.
type Subscription struct {
	lim  Limits
	spec Spec

	state     State
	cursor    Cursor // latest: from active, heartbeat and every valid event
	truncated bool   // replay had a gap (reported; folded while in an outage)
	err       string
	endReason messages.EndReason

	activated bool // acknowledged at least once
	outage    bool // in a recovery episode: interrupted, no valid event or heartbeat since
	attempts  int  // retries in this episode; reset only by a valid event or heartbeat

	stream  uint64     // the stream listened to; 0 when none is open
	streams uint64     // streams opened so far (the last stream number)
	timer   TimerKind  // what the timer slot holds; 0 when disarmed
	slot    clock.Slot // the armed timer's token
	alive   time.Time  // last sign of life: the stream's acknowledgement, a valid event or heartbeat

	seen  *Window
	stats Stats
	out   []Effect
}

// NewSubscription returns the subscription of spec, not yet started. The
// spec needs an id and a name; arguments, when given, must be a JSON
// object; max_age_ms must be an integer from 0 to 2^53-1.
func NewSubscription(spec Spec, lim Limits) (*Subscription, error) {
	switch {
	case spec.ID == "":
		return nil, fmt.Errorf("%w: no id", ErrSpec)
	case spec.Name == "":
		return nil, fmt.Errorf("%w: name is required", ErrSpec)
	case spec.Arguments != nil && !isObject(spec.Arguments):
		return nil, fmt.Errorf("%w: arguments must be an object", ErrSpec)
	case spec.MaxAgeMs != nil && (*spec.MaxAgeMs < 0 || *spec.MaxAgeMs > maxSafeInteger):
		return nil, fmt.Errorf("%w: max_age_ms must be a nonnegative integer", ErrSpec)
	}
	if spec.Arguments == nil {
		spec.Arguments = []byte("{}")
	}
	lim = lim.withDefaults()
	return &Subscription{lim: lim, spec: spec, state: StateOpening, cursor: spec.Cursor, seen: NewWindow(lim.DedupeWindow)}, nil
}

// ID returns the logical subscription id.
func (s *Subscription) ID() string { return s.spec.ID }

// State returns the current state.
func (s *Subscription) State() State { return s.state }

// Stats returns the frame counters.
func (s *Subscription) Stats() Stats { return s.stats }

// Snapshot returns the subscription as the model sees it.
func (s *Subscription) Snapshot() Snapshot {
	return Snapshot{
		ID: s.spec.ID, Server: s.spec.Server, Name: s.spec.Name, Arguments: s.spec.Arguments,
		Cursor: s.cursor, Status: s.state, MaxAgeMs: s.spec.MaxAgeMs,
		Truncated: s.truncated, Error: s.err, EndReason: s.endReason,
	}
}

// Start opens the first stream, with the spec's cursor, and arms the
// activation timer. Call it once.
func (s *Subscription) Start() []Effect {
	s.out = s.out[:0]
	// Only once: a second Start (or one after a Cancel) does nothing.
	if s.streams == 0 && s.state == StateOpening {
		s.open()
	}
	return s.out
}

// Cancel stops the subscription (unsubscribe, an aborted subscribe,
// shutdown): stopped, the stream cancelled, a pending retry or timer
// dropped. It wakes nothing; a pending subscribe is rejected.
func (s *Subscription) Cancel() []Effect {
	s.out = s.out[:0]
	if s.state.Live() {
		s.finish(messages.End{Reason: messages.EndCancelled})
	}
	return s.out
}

// Abort ends the subscription as failed with why, for a cause outside its
// streams (the session that owns it was invalidated, its server was
// removed): the stream is cancelled, a pending subscribe rejected, and the
// model woken once the subscription had been active.
func (s *Subscription) Abort(why string) []Effect {
	s.out = s.out[:0]
	if s.state.Live() {
		s.finish(messages.End{Reason: messages.EndError, Error: why})
	}
	return s.out
}

// StreamEnded reports that stream number stream ended (a final result, a
// JSON-RPC error, a lost connection or response stream, a failed send). The
// end of a stream the subscription no longer listens to is ignored.
func (s *Subscription) StreamEnded(stream uint64, end messages.End) []Effect {
	s.out = s.out[:0]
	// The end of a stream already given up on (cancelled after a timeout,
	// or replaced by a reopen) is expected and says nothing new.
	if stream == 0 || stream != s.stream || !s.state.Live() {
		return nil
	}
	s.stream = 0 // over by itself: nothing to cancel
	s.interrupted(end)
	return s.out
}

// Fire reports that the timer armed with token fired at now. A stale token
// (the slot was re-armed or disarmed since) is ignored.
//
// The watchdog is lazy: a valid event or heartbeat only records when it
// came, and a firing before HeartbeatTimeout has passed since then re-arms
// for the rest, so a busy stream costs no timer operation per event.
func (s *Subscription) Fire(now time.Time, token uint64) []Effect {
	s.out = s.out[:0]
	if s.timer == 0 || !s.slot.Fired(token) {
		return nil
	}
	// The slot is empty now; each case below re-arms it if it needs to.
	kind := s.timer
	s.timer = 0
	switch kind {
	case TimerActivation:
		s.lost(messages.End{Reason: messages.EndDisconnected, Error: "event stream activation timed out"})
	case TimerWatchdog:
		if rest := s.alive.Add(s.lim.HeartbeatTimeout).Sub(now); rest > 0 {
			s.arm(TimerWatchdog, rest)
			break
		}
		s.lost(messages.End{Reason: messages.EndDisconnected, Error: "event stream heartbeat timed out"})
	case TimerRetry:
		s.open()
	}
	return s.out
}

// open sends the next events/stream request (same name and arguments, the
// latest cursor, the original max_age_ms) and arms its activation timer.
func (s *Subscription) open() {
	s.streams++
	s.stream = s.streams
	s.stats.Opens++
	s.out = append(s.out, OpenStream{Stream: s.stream, Retry: s.attempts, Params: StreamParams{
		Name: s.spec.Name, Arguments: s.spec.Arguments, Cursor: s.cursor, MaxAgeMs: s.spec.MaxAgeMs,
	}})
	s.arm(TimerActivation, s.lim.ActivationTimeout)
}

// lost gives up on a stream that is still open (a timer fired): cancel it,
// then handle the interruption.
func (s *Subscription) lost(end messages.End) {
	if s.stream != 0 {
		s.out = append(s.out, CancelStream{Stream: s.stream})
		s.stream = 0
	}
	s.interrupted(end)
}

// interrupted handles the end of the current stream. Before the first
// acknowledgement, a server's final result or cancellation, and a JSON-RPC
// error with a code are terminal; anything else starts or continues a
// recovery episode, until the retry budget is spent.
func (s *Subscription) interrupted(end messages.End) {
	if !s.activated || end.Reason == messages.EndEnded || end.Reason == messages.EndCancelled || end.ProtocolError != nil {
		s.finish(end)
		return
	}
	// From here on the subscription was active once and the end is
	// transient: a recovery episode starts, or continues when the
	// subscription had not yet shown a valid event or heartbeat since the
	// last interruption.
	wasRecovering := s.outage
	s.outage = true
	why := end.Error
	if why == "" {
		why = "event stream interrupted"
	}
	// attempts counts retries already made in this episode: with the
	// default budget of 5, the sixth interruption fails.
	if s.attempts >= s.lim.MaxRetries {
		s.finish(messages.End{Reason: messages.EndError, Error: "reconnect attempts exhausted: " + why})
		return
	}
	s.state, s.err, s.endReason = StateReconnecting, why, end.Reason
	// Only the first interruption of an episode wakes the model; further
	// failed attempts stay quiet until recovery or exhaustion.
	if !wasRecovering {
		s.wake()
	}
	delay := s.lim.retryDelay(s.attempts)
	s.attempts++
	s.arm(TimerRetry, delay) // replaces the activation timer or watchdog
}

// finish moves to the terminal state end gives: cancelled is stopped, ended
// is ended, anything else failed. It cancels an open stream, drops the
// timer, rejects a pending subscribe and, once the subscription was active,
// wakes the model unless the client itself cancelled.
func (s *Subscription) finish(end messages.End) {
	if s.stream != 0 {
		s.out = append(s.out, CancelStream{Stream: s.stream})
		s.stream = 0
	}
	s.disarm()
	switch end.Reason {
	case messages.EndCancelled:
		s.state = StateStopped
	case messages.EndEnded:
		s.state = StateEnded
	default:
		s.state = StateFailed
	}
	s.endReason, s.err = end.Reason, end.Error
	switch {
	case !s.activated:
		s.out = append(s.out, Reject{Err: rejection(end)})
	case end.Reason != messages.EndCancelled:
		s.wake()
	}
}

// rejection is a pending subscribe's error for end.
func rejection(end messages.End) string {
	switch {
	case end.Error != "":
		return end.Error
	case end.Reason == messages.EndCancelled:
		return "subscription cancelled"
	}
	return "event stream ended before the server acknowledged it"
}

// wake reports the current status to the model, and its error (if any) to
// the host's UI.
func (s *Subscription) wake() {
	s.out = append(s.out, Wake{Status: s.Snapshot()})
	if s.err != "" {
		s.notify(s.err)
	}
}

// notify shows text in the host's UI as a warning about the server.
func (s *Subscription) notify(text string) {
	s.out = append(s.out, Notify{Notice: messages.Notice{Level: messages.NoticeWarning, Server: s.spec.Server, Text: text}})
}

// arm fills the timer slot with kind, after from now, under a new token.
func (s *Subscription) arm(kind TimerKind, after time.Duration) {
	s.timer = kind
	s.out = append(s.out, Arm{Kind: kind, After: after, Token: s.slot.Arm()})
}

// disarm empties the timer slot; the new token makes a firing already
// on its way stale.
func (s *Subscription) disarm() {
	if s.timer == 0 {
		return
	}
	s.out = append(s.out, Disarm{Kind: s.timer})
	s.timer = 0
	s.slot.Disarm()
}
