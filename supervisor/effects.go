package supervisor

import (
	"fmt"
	"time"

	"github.com/mcprt/mcprt/messages"
)

// Effect is something the server actor must do. Effects are returned in
// the order they must run.
type Effect interface{ effect() }

// TimerKind names one of the lifecycle's timers. Each kind has one slot:
// arming it replaces what was armed before.
type TimerKind int

const (
	// TimerIdle closes an unused connection.
	TimerIdle TimerKind = iota + 1
	// TimerHealth starts a keep-alive health check.
	TimerHealth
	// TimerReconnect starts a keep-alive reconnect attempt.
	TimerReconnect
	// TimerStartup bounds a dial through its handshake (a Server's; its
	// token is the generation dialed).
	TimerStartup
	// TimerDeadline expires the operations past their deadline (a
	// Server's; see deadlines).
	TimerDeadline
)

var timerNames = [...]string{TimerIdle: "idle", TimerHealth: "health", TimerReconnect: "reconnect", TimerStartup: "startup", TimerDeadline: "deadline"}

func (k TimerKind) String() string {
	if k <= 0 || int(k) >= len(timerNames) {
		return "timer?"
	}
	return timerNames[k]
}

// Dial opens connection generation Gen. The actor acquires a start slot,
// dials, and reports the outcome with Lifecycle.Dialed.
type Dial struct{ Gen uint64 }

// CloseConn closes connection generation Gen (its ConnClosed then comes
// back through Lifecycle.Closed).
type CloseConn struct{ Gen uint64 }

// CancelDial abandons the dial of generation Gen.
type CancelDial struct{ Gen uint64 }

// Arm sets the timer of Kind to fire After from now with Token; the actor
// hands the token back with Lifecycle.Fire.
type Arm struct {
	Kind  TimerKind
	After time.Duration
	Token uint64
}

// Disarm stops the timer of Kind.
type Disarm struct{ Kind TimerKind }

// ReleaseWaiters says connection Gen is up: operations waiting for it run now.
type ReleaseWaiters struct{ Gen uint64 }

// FailWaiters says the connection waiting operations wanted will not come:
// fail them with Err.
type FailWaiters struct{ Err *messages.Error }

// HealthCheck asks the actor to check connection Gen with a real request and
// report with Lifecycle.HealthDone.
type HealthCheck struct{ Gen uint64 }

func (Dial) effect()           {}
func (CloseConn) effect()      {}
func (CancelDial) effect()     {}
func (Arm) effect()            {}
func (Disarm) effect()         {}
func (ReleaseWaiters) effect() {}
func (FailWaiters) effect()    {}
func (HealthCheck) effect()    {}

func (e Dial) String() string           { return fmt.Sprintf("dial gen=%d", e.Gen) }
func (e CloseConn) String() string      { return fmt.Sprintf("close gen=%d", e.Gen) }
func (e CancelDial) String() string     { return fmt.Sprintf("cancel-dial gen=%d", e.Gen) }
func (e Arm) String() string            { return fmt.Sprintf("arm %s %s #%d", e.Kind, e.After, e.Token) }
func (e Disarm) String() string         { return fmt.Sprintf("disarm %s", e.Kind) }
func (e ReleaseWaiters) String() string { return fmt.Sprintf("release-waiters gen=%d", e.Gen) }
func (e FailWaiters) String() string    { return fmt.Sprintf("fail-waiters %s", e.Err.Code()) }
func (e HealthCheck) String() string    { return fmt.Sprintf("health-check gen=%d", e.Gen) }

// Decision answers a request for a connection.
type Decision struct {
	// Ready is set when connection Gen is up: proceed now.
	Ready bool
	Gen   uint64
	// Wait is set when a dial is under way: queue the operation until
	// ReleaseWaiters or FailWaiters.
	Wait bool
	// Err is set when the operation must fail now.
	Err *messages.Error
}
