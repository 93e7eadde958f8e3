package eventstream

import (
	"encoding/json"

	"github.com/mcprt/mcprt/messages"
)

// State is a subscription's status (events-protocol.md (b)).
type State string

// The states. Opening, active and reconnecting are live; stopped, ended
// and failed are terminal.
const (
	// StateOpening: the first stream is open, its acknowledgement awaited.
	StateOpening State = "opening"
	// StateActive: the server acknowledged the stream; events flow.
	StateActive State = "active"
	// StateReconnecting: the stream was lost; a retry is pending, or a
	// reopened stream awaits its acknowledgement.
	StateReconnecting State = "reconnecting"
	// StateStopped: cancelled by unsubscribe, an aborted subscribe, or
	// shutdown.
	StateStopped State = "stopped"
	// StateEnded: the server ended the stream with a final result.
	StateEnded State = "ended"
	// StateFailed: a terminal error (terminated, a JSON-RPC error, an
	// activation failure, reconnects exhausted).
	StateFailed State = "failed"
)

// Live reports whether the state is opening, active or reconnecting.
func (s State) Live() bool {
	return s == StateOpening || s == StateActive || s == StateReconnecting
}

// Snapshot is a subscription as the model sees it: in the subscribe and
// list results and in status wakeups. Its JSON is the reference's
// Subscription object: {id, server, name, arguments, cursor, status,
// maxAgeMs?, truncated?, error?, endReason?}.
type Snapshot struct {
	ID        string          `json:"id"`
	Server    string          `json:"server"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Cursor    Cursor          `json:"cursor"`
	Status    State           `json:"status"`
	MaxAgeMs  *int64          `json:"maxAgeMs,omitempty"`
	// Truncated says replay had a gap: some events are unavailable.
	Truncated bool   `json:"truncated,omitempty"`
	Error     string `json:"error,omitempty"`
	// EndReason is how the last stream ended (while reconnecting, or in a
	// terminal state).
	EndReason messages.EndReason `json:"endReason,omitempty"`
	// Stats are the subscription's frame counters; set in the list
	// action's answer only (nil in status wakeups).
	Stats *Stats `json:"stats,omitempty"`
}

// Spec is what a subscription subscribes to.
type Spec struct {
	// ID is the logical subscription id, stable across reconnects (the
	// actor's choice; the reference uses the first stream's request id).
	ID     string
	Server string
	// Name is the event's name in the server's catalog.
	Name string
	// Arguments is a JSON object (nil means {}).
	Arguments json.RawMessage
	// Cursor seeds the first request (null: from now).
	Cursor Cursor
	// MaxAgeMs bounds replay; nil leaves it to the server. Sent unchanged
	// on every reopen.
	MaxAgeMs *int64
}

// StreamParams are the params of one events/stream request.
type StreamParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Cursor    Cursor          `json:"cursor"`
	MaxAgeMs  *int64          `json:"maxAgeMs,omitempty"`
}

// Stats count what a subscription did with its frames.
type Stats struct {
	// Delivered counts events handed on for delivery.
	Delivered uint64 `json:"delivered"`
	// Duplicates counts valid events suppressed by the dedupe window.
	Duplicates uint64 `json:"duplicates"`
	// Invalid counts frames dropped as invalid: undecodable, an event of
	// another name, an event or heartbeat while not active.
	Invalid uint64 `json:"invalid"`
	// Late counts frames of a stream the subscription no longer listens to.
	Late uint64 `json:"late"`
	// Opens counts events/stream requests (the first and every reopen).
	Opens uint64 `json:"opens"`
}
