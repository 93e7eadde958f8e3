package eventsrv

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
)

// The faults a Server injects into its streams ([Server.Inject] for open
// streams, [Server.Arm] for the next ones to open).
const (
	// FaultStall stops events and heartbeats (for ms milliseconds when
	// ms > 0, otherwise until FaultResume); armed before active, it holds
	// the acknowledgement back too.
	FaultStall = "stall"
	// FaultResume ends a stall.
	FaultResume = "resume"
	// FaultHeartbeat sends one heartbeat now.
	FaultHeartbeat = "heartbeat"
	// FaultGap skips every occurrence not yet sent and announces it with a
	// second notifications/events/active {cursor, truncated: true}.
	FaultGap = "gap"
	// FaultDuplicate sends the last count (default 1) occurrences the
	// stream sent again, with their eventIds and cursors.
	FaultDuplicate = "duplicate"
	// FaultError sends notifications/events/error; the stream goes on.
	FaultError = "error"
	// FaultTerminate sends notifications/events/terminated; the stream then
	// sends nothing more and stays open until the client leaves.
	FaultTerminate = "terminate"
	// FaultEnd ends the stream with the final result {}.
	FaultEnd = "end"
	// FaultRPCError ends the stream with a JSON-RPC error: code (default
	// -32000) may be any JSON value, so a non-numeric code is sent as it
	// is; frame "no_code" leaves the code out.
	FaultRPCError = "rpc_error"
	// FaultCancel ends the stream with notifications/cancelled from the
	// server.
	FaultCancel = "cancel"
	// FaultDrop ends the stream without a result: on Streamable HTTP its
	// response ends, elsewhere it just falls silent.
	FaultDrop = "drop"
	// FaultDisconnect drops the connection (see mcpline's Call.Disconnect):
	// a stdio server exits, a socket or legacy SSE session ends, a
	// Streamable HTTP stream's response ends.
	FaultDisconnect = "disconnect"
	// FaultMalformed sends one invalid frame (frame names which, see
	// [MalformedFrames]).
	FaultMalformed = "malformed"
	// FaultOversized sends one event whose data is a string of bytes bytes
	// (default DefaultOversized, beyond the client's 16 MiB frame limit).
	FaultOversized = "oversized"
	// FaultListChanged sends notifications/events/list_changed (without a
	// subscription id) on the stream's channel.
	FaultListChanged = "list_changed"
	// FaultDelay (armed before active only) waits ms milliseconds.
	FaultDelay = "delay"
)

// FaultKinds lists every fault kind.
var FaultKinds = []string{FaultStall, FaultResume, FaultHeartbeat, FaultGap, FaultDuplicate, FaultError,
	FaultTerminate, FaultEnd, FaultRPCError, FaultCancel, FaultDrop, FaultDisconnect, FaultMalformed,
	FaultOversized, FaultListChanged, FaultDelay}

// MalformedFrames lists FaultMalformed's frames: "json" (a frame that is
// not JSON), "event_id_number", "event_id_long" (1,025 characters),
// "wrong_name", "no_data", "timestamp_long" (81 characters),
// "cursor_number", "no_subscription" (no _meta) and "wrong_subscription"
// (another request's id).
var MalformedFrames = []string{"json", "event_id_number", "event_id_long", "wrong_name", "no_data",
	"timestamp_long", "cursor_number", "no_subscription", "wrong_subscription"}

// DefaultOversized is FaultOversized's default size: one byte over the
// runtime's frame limit.
const DefaultOversized = 16<<20 + 1

// maxOversized bounds FaultOversized's size.
const maxOversized = 64 << 20

// The phases of an armed fault.
const (
	PhaseBeforeActive = "before_active"
	PhaseAfterActive  = "after_active"
)

// Fault is one disturbance: Kind is one of the Fault constants, the other
// fields its parameters.
type Fault struct {
	Kind    string          `json:"fault"`
	Count   int             `json:"count,omitempty"`
	Bytes   int             `json:"bytes,omitempty"`
	Ms      int64           `json:"ms,omitempty"`
	Code    json.RawMessage `json:"code,omitempty"`
	Message string          `json:"message,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
	Frame   string          `json:"frame,omitempty"`
}

// Check reports what is wrong with f, or nil.
func (f Fault) Check() error {
	switch {
	case !slices.Contains(FaultKinds, f.Kind):
		return fmt.Errorf("eventsrv: unknown fault %q (one of %v)", f.Kind, FaultKinds)
	case f.Kind == FaultMalformed && !slices.Contains(MalformedFrames, f.Frame):
		return fmt.Errorf("eventsrv: unknown malformed frame %q (one of %v)", f.Frame, MalformedFrames)
	case f.Count < 0 || f.Bytes < 0 || f.Bytes > maxOversized || f.Ms < 0:
		return fmt.Errorf("eventsrv: count, bytes (at most %d) and ms must not be negative", maxOversized)
	case f.Kind == FaultError || f.Kind == FaultTerminate:
		if _, ok := f.errorObject(0, ""); !ok {
			return fmt.Errorf("eventsrv: the code of %q must be an integer", f.Kind)
		}
	}
	return nil
}

// errorObject returns the error object of an error, terminate or
// rpc_error fault with its defaults. ok is false when the code is not an
// integer (rpc_error sends such codes raw).
func (f Fault) errorObject(code int, message string) (obj ErrorObject, ok bool) {
	obj = ErrorObject{Code: code, Message: message, Data: f.Data}
	if f.Message != "" {
		obj.Message = f.Message
	}
	if isNull(f.Code) {
		return obj, true
	}
	return obj, json.Unmarshal(f.Code, &obj.Code) == nil
}

// Target selects open streams: those of event type Name and of the
// request whose id is Subscription (compact JSON, for example "7" or
// "\"mcprt-1\""); an empty field selects all.
type Target struct {
	Name         string
	Subscription string
}

// armedFault waits for the next streams to open.
type armedFault struct {
	fault Fault
	phase string
	name  string // "" for any event type
	left  int
}

// Arm makes the next times (at least 1) streams of event type name ("" for
// any) suffer f, before or after their acknowledgement (phase). Every open
// takes each armed fault that matches it.
func (s *Server) Arm(f Fault, phase, name string, times int) error {
	if err := f.Check(); err != nil {
		return err
	}
	if phase != PhaseBeforeActive && phase != PhaseAfterActive {
		return fmt.Errorf("eventsrv: phase must be %q or %q", PhaseBeforeActive, PhaseAfterActive)
	}
	if f.Kind == FaultDelay && phase != PhaseBeforeActive {
		return fmt.Errorf("eventsrv: %q works only %s", FaultDelay, PhaseBeforeActive)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed = append(s.armed, armedFault{fault: f, phase: phase, name: name, left: max(times, 1)})
	return nil
}

// takeArmed consumes the armed faults a new stream of name suffers.
func (s *Server) takeArmed(name string) (before, after []Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.armed[:0]
	for _, a := range s.armed {
		if a.name == "" || a.name == name {
			if a.phase == PhaseBeforeActive {
				before = append(before, a.fault)
			} else {
				after = append(after, a.fault)
			}
			a.left--
		}
		if a.left > 0 {
			kept = append(kept, a)
		}
	}
	s.armed = kept
	return before, after
}

// Inject applies f to every open stream that t selects and returns how
// many there were, once each has applied it (or ended, or ctx ended). A
// fault that ends a stream returns once the stream is unregistered, so
// Streams no longer lists it.
func (s *Server) Inject(ctx context.Context, f Fault, t Target) (int, error) {
	targets, waits, err := s.post(f, t)
	if err != nil {
		return 0, err
	}
	for i, st := range targets {
		select {
		case <-waits[i]:
		case <-st.gone:
		case <-ctx.Done():
			select {
			case <-waits[i]: // applied, and its application ended ctx (a disconnect)
			default:
				return i, ctx.Err()
			}
		}
	}
	return len(targets), nil
}

// Post hands f to every open stream that t selects, without waiting for
// them to apply it, and returns how many there were. Sources use it from
// places where waiting could deadlock (a Watch function, or code holding a
// lock a stream may need to end).
func (s *Server) Post(f Fault, t Target) (int, error) {
	targets, _, err := s.post(f, t)
	return len(targets), err
}

// post enqueues f on the selected streams.
func (s *Server) post(f Fault, t Target) ([]*stream, []chan struct{}, error) {
	if err := f.Check(); err != nil {
		return nil, nil, err
	}
	if f.Kind == FaultDelay {
		return nil, nil, fmt.Errorf("eventsrv: %q can only be armed", FaultDelay)
	}
	s.mu.Lock()
	var targets []*stream
	for st := range s.streams {
		if (t.Name == "" || t.Name == st.t.typ.Name) && (t.Subscription == "" || t.Subscription == st.sub) {
			targets = append(targets, st)
		}
	}
	s.mu.Unlock()
	waits := make([]chan struct{}, len(targets))
	for i, st := range targets {
		waits[i] = st.enqueue(f)
	}
	return targets, waits, nil
}

// StreamInfo describes an open stream.
type StreamInfo struct {
	// Subscription is the request id (compact JSON).
	Subscription string `json:"subscription"`
	Name         string `json:"name"`
	// Cursor is the position the stream has sent up to.
	Cursor  string `json:"cursor"`
	Active  bool   `json:"active"`
	Stalled bool   `json:"stalled"`
}

// Streams describes the open streams, in the order they opened.
func (s *Server) Streams() []StreamInfo {
	s.mu.Lock()
	all := make([]*stream, 0, len(s.streams))
	for st := range s.streams {
		all = append(all, st)
	}
	s.mu.Unlock()
	slices.SortFunc(all, func(a, b *stream) int { return int(a.n - b.n) })
	out := make([]StreamInfo, len(all))
	for i, st := range all {
		out[i] = st.info()
	}
	return out
}
