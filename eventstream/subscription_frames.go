package eventstream

import (
	"time"

	"github.com/mcprt/mcprt/messages"
)

// Frame handles one notification of stream number stream, decoded with
// Decode, arrived at now. Frames of a stream the subscription no longer
// listens to are counted as late and ignored; invalid frames are counted
// and dropped without touching the cursor, the watchdog or the budget.
func (s *Subscription) Frame(now time.Time, stream uint64, f Frame) []Effect {
	s.out = s.out[:0]
	// A frame of a replaced or cancelled stream, or after the end, can
	// still be on its way; it must not touch the current stream's state.
	if stream == 0 || stream != s.stream || !s.state.Live() {
		s.stats.Late++
		return nil
	}
	switch f.Kind {
	case FrameActive:
		s.onActive(now, f)
	case FrameEvent:
		s.onEvent(now, f)
	case FrameHeartbeat:
		s.onHeartbeat(now, f)
	case FrameError:
		s.onError(f.Message)
	case FrameTerminated:
		why := f.Message
		if why == "" {
			why = "event subscription terminated by the server"
		}
		s.finish(messages.End{Reason: messages.EndError, Error: why})
	default:
		s.stats.Invalid++
	}
	return s.out
}

// onActive is the server's acknowledgement: the stream's first (opening or
// reconnecting → active), or a later one, which reports a replay gap when
// truncated. The first one starts the watchdog; a later one does not reset
// it (only valid events and heartbeats do), nor does any reset the retry
// budget, so acknowledge-then-drop loops still exhaust it.
//
// A gap is reported once: a UI notice, and a wake when it comes on an
// active stream outside a recovery episode. During an episode it is
// folded into the episode's eventual recovery or failure status, and only
// the episode's first gap is noticed. The first acknowledgement resolves
// the pending subscribe instead of waking (the tool result renders it).
func (s *Subscription) onActive(now time.Time, f Frame) {
	ack := s.state != StateActive // this stream's acknowledgement
	firstEver := !s.activated     // the subscription's first one
	s.cursor = f.Cursor
	// A gap needs a cursor: a server with no replay position for this
	// event type cannot have skipped anything.
	gap := f.Truncated && !f.Cursor.IsNull()
	wasTruncated := s.truncated
	// In an episode the flag accumulates (a later clean ack does not hide
	// an earlier gap); outside one, each ack sets it afresh.
	if s.outage {
		s.truncated = s.truncated || gap
	} else {
		s.truncated = gap
	}
	s.state, s.err, s.endReason, s.activated = StateActive, "", "", true
	if ack {
		s.alive = now
		s.arm(TimerWatchdog, s.lim.HeartbeatTimeout)
	}
	if gap && (!s.outage || !wasTruncated) {
		s.notify("replay is truncated for " + s.spec.Name + "; some events are unavailable")
	}
	switch {
	case firstEver:
		s.out = append(s.out, Resolve{Status: s.Snapshot()})
	case gap && !s.outage:
		s.out = append(s.out, Wake{Status: s.Snapshot()})
	}
}

// onEvent handles an occurrence: valid only on an active stream and for
// the subscribed name. A valid event advances the cursor, resets the budget
// and the watchdog and ends a recovery episode (its own batch tells the
// model); a duplicate does all that but is not delivered.
func (s *Subscription) onEvent(now time.Time, f Frame) {
	if s.state != StateActive || f.Event.Name != s.spec.Name {
		s.stats.Invalid++
		return
	}
	s.cursor, s.attempts, s.outage, s.alive = f.Cursor, 0, false, now
	// The window outlives streams: a replay after a reconnect is checked
	// against everything delivered before it.
	if s.seen.Seen(f.Event.EventID) {
		s.stats.Duplicates++
		return
	}
	// A delivered event clears an upstream error: the next identical error
	// is news again.
	s.err = ""
	s.stats.Delivered++
	s.out = append(s.out, Deliver{Item: &EventItem{
		SubscriptionID: s.spec.ID, Server: s.spec.Server, Event: f.Event, ReplayTruncated: s.truncated,
	}})
}

// onHeartbeat handles liveness on an active stream: it advances the cursor
// (quiet periods move it too), resets the budget and the watchdog, and
// wakes once when it confirms a recovery. Heartbeats never wake otherwise.
func (s *Subscription) onHeartbeat(now time.Time, f Frame) {
	if s.state != StateActive {
		s.stats.Invalid++
		return
	}
	recovered := s.outage
	s.cursor, s.attempts, s.outage, s.err, s.alive = f.Cursor, 0, false, "", now
	if recovered {
		s.out = append(s.out, Wake{Status: s.Snapshot()})
	}
}

// onError records a recoverable upstream error; the stream stays open. A
// changed message wakes (and notifies) while the subscription is active;
// a repeated one does nothing.
func (s *Subscription) onError(msg string) {
	// An error without a message still counts, under a fixed text.
	if msg == "" {
		msg = "upstream event error"
	}
	if s.err == msg {
		return
	}
	s.err = msg
	if s.state == StateActive {
		s.wake()
	}
}
