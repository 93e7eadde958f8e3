package messages

import "time"

// ServerState is where a server's lifecycle stands.
type ServerState int

const (
	// StateIdle: not connected, nothing pending (a lazy server before first
	// use, or after an idle close).
	StateIdle ServerState = iota
	// StateConnecting: a dial (spawn, connect, handshake) is in progress.
	StateConnecting
	// StateConnected: a connection is up.
	StateConnected
	// StateBackoff: a keep-alive server lost its connection and waits for
	// its next reconnect attempt.
	StateBackoff
	// StateFailed: the last connect failed; failure memory is active.
	StateFailed
	// StateDown: the server's actor crashed too often; it stays down until
	// an explicit connect.
	StateDown
	// StateDisabled: configured with disabled: true.
	StateDisabled
	// StateClosed: the runtime shut it down.
	StateClosed
)

var stateNames = [...]string{
	StateIdle:       "idle",
	StateConnecting: "connecting",
	StateConnected:  "connected",
	StateBackoff:    "reconnecting",
	StateFailed:     "failed",
	StateDown:       "down",
	StateDisabled:   "disabled",
	StateClosed:     "closed",
}

// String returns the state's name as status output shows it.
func (s ServerState) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return "unknown"
	}
	return stateNames[s]
}

// ServerStatus is a snapshot of one server, as QueryStatus answers it.
// Reading it never connects anything.
type ServerStatus struct {
	Name string
	// Member is, through a member of a shared runtime's cluster, the
	// address of the other member whose server this is (empty for the
	// asked member's own, and outside a cluster).
	Member    string
	State     ServerState
	Lifecycle string
	// Transport is how the current or last connection was made (0 if none).
	Transport TransportKind
	// ProtocolVersion is the current or last negotiated version.
	ProtocolVersion string
	// Generation counts connections made so far.
	Generation uint64
	// ToolCount is the number of tools last listed, -1 when unknown.
	ToolCount int
	// Leases counts in-flight operations holding the connection open.
	Leases int
	// FailedAt is when the last connect failed (zero if none remembered).
	FailedAt time.Time
	// LastError is the last connect or connection error (nil if none).
	LastError *Error
	// CatalogError is why the current connection's tools listing failed
	// (a catalog limit, the catalog deadline, a cursor loop, an error
	// answer), nil if it did not: the server is connected but degraded,
	// and calls to its tools get this error.
	CatalogError *Error
	// Instructions is the server's usage guidance from the last handshake.
	Instructions string
	// Restarts counts actor restarts after crashes.
	Restarts int
	// LateFrames counts protocol-extension stream notifications that
	// arrived after their stream had ended and were dropped.
	LateFrames uint64
	// UnknownResponses counts responses whose id the connection never
	// sent; they were ignored.
	UnknownResponses uint64
}
