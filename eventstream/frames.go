package eventstream

import (
	"encoding/json"
	"fmt"

	"github.com/mcprt/mcprt/internal/jsonscan"
)

// The notification methods of an events/stream (events-protocol.md (a)).
const (
	MethodActive     = "notifications/events/active"
	MethodEvent      = "notifications/events/event"
	MethodHeartbeat  = "notifications/events/heartbeat"
	MethodError      = "notifications/events/error"
	MethodTerminated = "notifications/events/terminated"
)

// StreamMethods are the notifications an events/stream declares.
var StreamMethods = []string{MethodActive, MethodEvent, MethodHeartbeat, MethodError, MethodTerminated}

// FrameKind says which notification a Frame is.
type FrameKind int

// The frame kinds; FrameInvalid is a frame that could not be read (see
// Frame.Invalid).
const (
	FrameInvalid FrameKind = iota
	FrameActive
	FrameEvent
	FrameHeartbeat
	FrameError
	FrameTerminated
)

var frameNames = [...]string{"invalid", "active", "event", "heartbeat", "error", "terminated"}

// String names the frame kind.
func (k FrameKind) String() string {
	if k < 0 || int(k) >= len(frameNames) {
		return "frame?"
	}
	return frameNames[k]
}

// Frame is one stream notification, decoded typed from its raw params.
// Unknown fields, _meta included, are dropped.
type Frame struct {
	Kind FrameKind
	// Cursor is the frame's cursor (active, event, heartbeat); null when
	// absent or not a string.
	Cursor Cursor
	// Truncated is an active frame's gap flag (truncated: true).
	Truncated bool
	// Event is an event frame's occurrence; its Name is not yet checked
	// against the subscription (Subscription.Frame does that).
	Event Event
	// Message is an error or terminated frame's error.message, empty when
	// it has none.
	Message string
	// Invalid says why a FrameInvalid frame was rejected.
	Invalid string
}

// Event is one occurrence as the model sees it: the wire fields, the
// _meta and any extra field dropped, the cursor that came with it.
type Event struct {
	EventID   string          `json:"eventId"`
	Name      string          `json:"name"`
	Timestamp string          `json:"timestamp"`
	Cursor    Cursor          `json:"cursor"`
	Data      json.RawMessage `json:"data"`
}

// wireEvent is the event frame's params. Required strings are *string so
// that a missing field and a wrong type both fail; data stays raw (null is
// present, absent is nil).
type wireEvent struct {
	EventID   *string         `json:"eventId"`
	Name      *string         `json:"name"`
	Timestamp *string         `json:"timestamp"`
	Cursor    Cursor          `json:"cursor"`
	Data      json.RawMessage `json:"data"`
}

// wireMisc is the params of every other frame: each field is tolerant, as
// the reference reads them (a cursor that is not a string is null, a
// truncated that is not true is false, an error without a string message
// has none).
type wireMisc struct {
	Cursor    Cursor     `json:"cursor"`
	Truncated flag       `json:"truncated"`
	Error     errorField `json:"error"`
}

// errorField is the error object of an error or terminated frame; only a
// string message is kept, and a value that is not an object is ignored.
type errorField struct{ message string }

func (e *errorField) UnmarshalJSON(b []byte) error {
	*e = errorField{}
	if !isObject(b) {
		return nil
	}
	var w struct {
		Message looseString `json:"message"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	e.message = w.Message.s
	return nil
}

// Decode reads one stream notification. It never fails: a frame it cannot
// use comes back as FrameInvalid with the reason. Params must be a JSON
// object. An event must have a string eventId of at most MaxEventIDChars
// characters, a string name of at most MaxEventNameChars, a string
// timestamp of at most MaxTimestampChars, and a data field (null counts as
// present). Whether the name is the subscribed one is the subscription's
// check.
func Decode(method string, params json.RawMessage) Frame {
	if !isObject(params) {
		return invalid("params are not an object")
	}
	// Events are the hot path and the strict case: their own struct, so
	// the other frames' tolerant fields cost them nothing.
	if method == MethodEvent {
		return decodeEvent(params)
	}
	var kind FrameKind
	switch method {
	case MethodActive:
		kind = FrameActive
	case MethodHeartbeat:
		kind = FrameHeartbeat
	case MethodError:
		kind = FrameError
	case MethodTerminated:
		kind = FrameTerminated
	default:
		return invalid("unknown method " + method)
	}
	// One tolerant struct serves the four other frames; each takes the
	// fields it has.
	var w wireMisc
	if err := json.Unmarshal(params, &w); err != nil {
		return invalid("malformed params: " + err.Error())
	}
	f := Frame{Kind: kind}
	switch kind {
	case FrameActive:
		f.Cursor, f.Truncated = w.Cursor, bool(w.Truncated)
	case FrameHeartbeat:
		f.Cursor = w.Cursor
	default:
		f.Message = w.Error.message
	}
	return f
}

// decodeEvent reads and validates an event frame. A wrong type in a
// required field fails Unmarshal; a missing one leaves its pointer nil.
// Lengths are checked in characters, cheaply for short strings.
func decodeEvent(params json.RawMessage) Frame {
	w, ok := scanEvent(params)
	if !ok {
		var err error
		if w, err = unmarshalEvent(params); err != nil {
			return invalid("malformed event: " + err.Error())
		}
	}
	switch {
	case w.EventID == nil:
		return invalid("event without a string eventId")
	case !chars(*w.EventID, MaxEventIDChars):
		return invalid(fmt.Sprintf("eventId longer than %d characters", MaxEventIDChars))
	case w.Name == nil:
		return invalid("event without a string name")
	case !chars(*w.Name, MaxEventNameChars):
		return invalid(fmt.Sprintf("event name longer than %d characters", MaxEventNameChars))
	case w.Timestamp == nil:
		return invalid("event without a string timestamp")
	case !chars(*w.Timestamp, MaxTimestampChars):
		return invalid(fmt.Sprintf("timestamp longer than %d characters", MaxTimestampChars))
	case w.Data == nil:
		return invalid("event without data")
	}
	// The event keeps only its wire fields: _meta and anything else the
	// server added are dropped here, before anything is delivered.
	return Frame{Kind: FrameEvent, Cursor: w.Cursor, Event: Event{
		EventID: *w.EventID, Name: *w.Name, Timestamp: *w.Timestamp, Cursor: w.Cursor, Data: w.Data,
	}}
}

// unmarshalEvent is the reference decoding of an event's params.
func unmarshalEvent(params []byte) (wireEvent, error) {
	var w wireEvent
	err := json.Unmarshal(params, &w)
	return w, err
}

// eventKeys are wireEvent's members, in the order scanEvent reads them.
var eventKeys = []string{"eventId", "name", "timestamp", "cursor", "data"}

// scanEvent is decodeEvent's fast path: the same wireEvent as
// unmarshalEvent, found by jsonscan in one pass without decoding, or
// false (not sure: unusual or invalid params, or a required field of the
// wrong type, whose error json.Unmarshal words). data is copied, as
// json.Unmarshal copies a RawMessage.
func scanEvent(params []byte) (wireEvent, bool) {
	var v [5][]byte
	if !jsonscan.Object(params, eventKeys, v[:]) {
		return wireEvent{}, false
	}
	var w wireEvent
	for i, dst := range [...]**string{&w.EventID, &w.Name, &w.Timestamp} {
		if raw := v[i]; raw != nil && string(raw) != "null" {
			s, ok := jsonscan.String(raw)
			if !ok {
				return wireEvent{}, false
			}
			*dst = &s
		}
	}
	if raw := v[3]; raw != nil && raw[0] == '"' {
		s, ok := jsonscan.String(raw)
		if !ok {
			return wireEvent{}, false
		}
		w.Cursor = CursorOf(s)
	}
	if v[4] != nil {
		w.Data = append(json.RawMessage(nil), v[4]...)
	}
	return w, true
}

// invalid is a frame that cannot be used, with the reason for the stats
// and for tests.
func invalid(why string) Frame { return Frame{Kind: FrameInvalid, Invalid: why} }
