package messages

import "encoding/json"

// Commands are what the runtime's callers (the agent-facing tools, the
// embedding API) send to a server actor. Each carries a Reply function that
// the actor calls exactly once; Reply must not block.

// Token identifies one caller operation across actors, so that the caller
// can abort it before it knows which connection or request id it became.
// The runtime allocates tokens from a counter.
type Token uint64

// Origin says on whose behalf a connection is wanted. It decides whether
// failure memory applies: only OriginModel calls are refused with
// KindServerBackoff after a recent failed connect.
type Origin int

const (
	// OriginModel is a call the model made through a tool.
	OriginModel Origin = iota
	// OriginExplicit is an explicit connect or reconnect asked for by the
	// user or the host; it bypasses failure memory and revives a server
	// that was kept down after repeated crashes.
	OriginExplicit
	// OriginInternal is a consumer with its own retry schedule (keep-alive
	// health checks, the events companion's reconnects).
	OriginInternal
)

// DeadlineKind selects which of a server's deadlines bounds a request.
type DeadlineKind int

const (
	// DeadlineCall is the call deadline (requestTimeoutMs, default 60 s): a
	// tool call, prompt or resource read. It starts once the connection is
	// up and progress does not reset it.
	DeadlineCall DeadlineKind = iota
	// DeadlineCatalog is the catalog deadline (catalogTimeoutMs, default
	// 30 s) covering every page of one listing.
	DeadlineCatalog
	// DeadlineNone means no deadline: the caller's context alone ends it.
	DeadlineNone
)

// Request asks a server actor to send one JSON-RPC request over its live
// connection, connecting first when the lifecycle allows. The request holds
// a lease on the connection generation it was sent on until it ends.
type Request struct {
	Token    Token
	Method   string
	Params   json.RawMessage
	Deadline DeadlineKind
	Origin   Origin
	Reply    func(Reply)
	// Gen, when not 0, pins the request to that connection generation (a
	// protocol session's): it never connects, and fails with
	// KindDisconnected once that connection has ended, even if it was
	// never sent, instead of moving to another connection.
	Gen uint64
	// Stream makes the request a stream (see StreamSpec); only with Gen.
	Stream *StreamSpec
	// Assist, when set, is the waiting caller's goroutine, lent to the
	// port for the request's blocking work (see Assist); it travels with
	// every Op the request sends.
	Assist *Assist
	// Caller is the caller tag of the call's context (WithCaller); it
	// travels with every Op the request sends.
	Caller any
}

// Reply answers a Request.
type Reply struct {
	// Result is the JSON-RPC result; nil when Err is set.
	Result json.RawMessage
	// Err says why the request failed.
	Err *Error
	// Gen is the connection generation the request ran on (0 if none).
	Gen uint64
	// ServerCancelled is set (with no Result and no Err) when the server
	// ended a stream by sending notifications/cancelled for it.
	ServerCancelled bool
	// NotSent is set when the request never reached a connection: its
	// protocol session was closed, or the session's connection had ended
	// before the request got there. Nothing was written, so the caller may
	// send it again on a fresh session.
	NotSent bool
}

// ListAll asks a server actor for every page of a list method (for example
// tools/list), under one catalog deadline.
type ListAll struct {
	Token Token
	// Method is the list method, e.g. "tools/list".
	Method string
	// Field is the result member holding the items, e.g. "tools".
	Field  string
	Origin Origin
	Reply  func(ListReply)
}

// ListReply answers ListAll.
type ListReply struct {
	// Items are the listed objects, in server order, across all pages.
	Items []json.RawMessage
	Err   *Error
	Gen   uint64
}

// Abort cancels the operation with the given token, if it is still pending.
// Its Reply (or ListReply) is then called with KindAborted.
type Abort struct {
	Token Token
}

// Connect asks a server actor to connect now (reconnecting if already
// connected when Fresh is set). It bypasses failure memory and revives a
// server kept down after repeated crashes.
type Connect struct {
	Token Token
	Fresh bool
	Reply func(ConnectReply)
}

// ConnectReply answers Connect.
type ConnectReply struct {
	Info ServerInfo
	Err  *Error
	Gen  uint64
}

// QueryStatus asks a server actor for its status. It never connects.
type QueryStatus struct {
	Reply func(ServerStatus)
}

// Shutdown asks an actor to stop taking work, fail what is pending with
// KindShutdown, close its connection and then call Reply.
type Shutdown struct {
	Reply func()
}

// Failable is implemented by commands whose caller must hear about a failure
// even when the actor handling them crashed: the supervisor calls Fail on
// the message that was being processed when an actor panicked.
type Failable interface {
	Fail(err *Error)
}

// Fail answers the request with err.
func (r *Request) Fail(err *Error) { r.Reply(Reply{Err: err}) }

// Fail answers the listing with err.
func (l *ListAll) Fail(err *Error) { l.Reply(ListReply{Err: err}) }

// Fail answers the connect with err.
func (c *Connect) Fail(err *Error) { c.Reply(ConnectReply{Err: err}) }
