package supervisor

import (
	"encoding/json"
	"fmt"

	"github.com/mcprt/mcprt/messages"
)

// The effects of a Server beyond the Lifecycle's (Dial, CloseConn,
// CancelDial, Arm and Disarm pass through it; ReleaseWaiters, FailWaiters
// and HealthCheck it handles itself).

// StartDial dials generation Gen now (its start slot is granted).
type StartDial struct{ Gen uint64 }

// ReleaseSlot returns the start slot of generation Gen to the root.
type ReleaseSlot struct{ Gen uint64 }

// PublishInfo says the dial of generation Gen connected: its server's
// information (instructions) is the server's now.
type PublishInfo struct{ Gen uint64 }

// Send writes Op on connection Gen.
type Send struct {
	Gen uint64
	Op  messages.Op
}

// Cancel cancels operation ID on connection Gen the transport's way (if
// the connection is still there).
type Cancel struct {
	Gen uint64
	ID  messages.OpID
}

// Reply answers a request.
type Reply struct {
	To    *messages.Request
	Reply messages.Reply
}

// ListReply answers a listing.
type ListReply struct {
	To    *messages.ListAll
	Reply messages.ListReply
}

// ConnectReply answers a connect: connection Gen is up (the actor adds
// the server's information).
type ConnectReply struct {
	To  *messages.Connect
	Gen uint64
}

// Answer answers To through its Fail method with Err; a refresh's caller
// hears nil when its catalog is current.
type Answer struct {
	To  messages.Failable
	Err *messages.Error
}

// Bind binds the protocol session of To (the actor's bind command) to
// connection Gen and answers it.
type Bind struct {
	To  messages.Failable
	Gen uint64
}

// Revive clears the restart history that keeps a crashed server down (an
// explicit connect).
type Revive struct{}

// Stopped says the shutdown has finished: nothing is open or dialing.
type Stopped struct{}

// ToolsListed hands over the items of a tools/list that succeeded, for the
// tool count and the catalog.
type ToolsListed struct{ Items []json.RawMessage }

// CatalogListed publishes a finished refresh of connection Gen (memory
// and disk cache).
type CatalogListed struct {
	Gen     uint64
	Listing Listing
}

// Withdraw withdraws the server's tools from the catalog for Err; Reset
// also sets its tool count to 0.
type Withdraw struct {
	Err   *messages.Error
	Reset bool
}

// ListError records that the tools listing failed with Err; the tools
// known from before stay callable.
type ListError struct{ Err *messages.Error }

// CatalogStale marks the server's catalog stale (a list changed).
type CatalogStale struct{}

// Relist asks the actor for a Relist input in a message of its own.
type Relist struct{}

func (StartDial) effect()     {}
func (ReleaseSlot) effect()   {}
func (PublishInfo) effect()   {}
func (Send) effect()          {}
func (Cancel) effect()        {}
func (Reply) effect()         {}
func (ListReply) effect()     {}
func (ConnectReply) effect()  {}
func (Answer) effect()        {}
func (Bind) effect()          {}
func (Revive) effect()        {}
func (Stopped) effect()       {}
func (ToolsListed) effect()   {}
func (CatalogListed) effect() {}
func (Withdraw) effect()      {}
func (ListError) effect()     {}
func (CatalogStale) effect()  {}
func (Relist) effect()        {}

func (e StartDial) String() string   { return fmt.Sprintf("start-dial gen=%d", e.Gen) }
func (e ReleaseSlot) String() string { return fmt.Sprintf("release-slot gen=%d", e.Gen) }
func (e PublishInfo) String() string { return fmt.Sprintf("publish-info gen=%d", e.Gen) }
func (e Send) String() string        { return fmt.Sprintf("send gen=%d %d %s", e.Gen, e.Op.ID, e.Op.Method) }
func (e Cancel) String() string      { return fmt.Sprintf("cancel gen=%d %d", e.Gen, e.ID) }
func (e Reply) String() string       { return "reply " + outcome(e.Reply.Gen, e.Reply.Err) }
func (e ListReply) String() string {
	return fmt.Sprintf("list-reply %s items=%d", outcome(e.Reply.Gen, e.Reply.Err), len(e.Reply.Items))
}
func (e ConnectReply) String() string  { return fmt.Sprintf("connect-reply gen=%d", e.Gen) }
func (e Answer) String() string        { return "answer " + outcome(0, e.Err) }
func (e Bind) String() string          { return fmt.Sprintf("bind gen=%d", e.Gen) }
func (Revive) String() string          { return "revive" }
func (Stopped) String() string         { return "stopped" }
func (e ToolsListed) String() string   { return fmt.Sprintf("tools-listed %d", len(e.Items)) }
func (e CatalogListed) String() string { return fmt.Sprintf("catalog-listed gen=%d", e.Gen) }
func (e Withdraw) String() string      { return fmt.Sprintf("withdraw %s reset=%t", e.Err.Code(), e.Reset) }
func (e ListError) String() string     { return "list-error " + e.Err.Code() }
func (CatalogStale) String() string    { return "catalog-stale" }
func (Relist) String() string          { return "relist" }

// outcome renders a reply's generation and error code for tests.
func outcome(gen uint64, err *messages.Error) string {
	s := "ok"
	if err != nil {
		s = err.Code()
	}
	if gen != 0 {
		s += fmt.Sprintf(" gen=%d", gen)
	}
	return s
}
