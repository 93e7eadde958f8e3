package remote

import (
	"encoding/json"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
)

// The protocol-extension API through a session (protocol.go on the
// session's side, ops_protocol.go on the member's) on the wire. The
// session's calls are ordinary requests (requestMsg, answered by
// replyMsg, cancelled by cancelMsg) with the operations below; what the
// member's protocol sessions, streams and observers report on their own
// comes down as protoEventMsg, one kind, in order per session.

// The operations of the protocol-extension API.
const (
	opProtoRegister = "protoRegister" // args: mcprt.Definition; result: {}
	opProtoDispose  = "protoDispose"  // name: the namespace
	opProtoConnect  = "protoConnect"  // args: protoConnectArgs; result: messages.ServerInfo
	opProtoRequest  = "protoRequest"  // args: protoRequestArgs; result: the server's raw result
	opProtoOpen     = "protoOpen"     // args: protoOpenArgs (a stream); result: {}
	opProtoWatch    = "protoWatch"    // args: protoOpenArgs (an observer); result: {}
	opProtoCancel   = "protoCancel"   // args: protoOpenArgs (Stream only): cancel a stream or close an observer
	opProtoClose    = "protoClose"    // args: protoOpenArgs (Conn only): close a protocol session
)

// kindProto is protoEventMsg's envelope kind (member → session).
const kindProto = "proto"

// protoConnectArgs open protocol session Conn (the session's own id for
// it) of Namespace on Server, a configured server's name.
type protoConnectArgs struct {
	Namespace string `json:"namespace"`
	Server    string `json:"server"`
	Conn      uint64 `json:"conn"`
}

// protoRequestArgs are one request of protocol session Conn.
type protoRequestArgs struct {
	Conn   uint64          `json:"conn"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// protoOpenArgs name a stream or observer (Stream, the session's own id
// for it) of protocol session Conn: a stream's method and params, or an
// observer's methods.
type protoOpenArgs struct {
	Conn    uint64          `json:"conn,omitempty"`
	Stream  uint64          `json:"stream,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Methods []string        `json:"methods,omitempty"`
}

// The kinds of a protoEventMsg.
const (
	protoNote = "note" // a notification of Stream: Method, Params
	protoSent = "sent" // Stream's request was written
	protoEnd  = "end"  // Stream ended: End
	protoDone = "done" // protocol session Conn ended: Why
)

// protoEventMsg is what a member's protocol session reports by itself.
type protoEventMsg struct {
	Kind   string          `json:"kind"`
	Conn   uint64          `json:"conn,omitempty"`
	Stream uint64          `json:"stream,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	End    *mcprt.End      `json:"end,omitempty"`
	Why    string          `json:"why,omitempty"`
}

// sameDefinition reports whether two definitions declare the same
// namespace and methods (in any order).
func sameDefinition(a, b mcprt.Definition) bool {
	same := func(x, y []string) bool {
		if len(x) != len(y) {
			return false
		}
		seen := map[string]int{}
		for _, m := range x {
			seen[m]++
		}
		for _, m := range y {
			if seen[m] == 0 {
				return false
			}
			seen[m]--
		}
		return true
	}
	return a.Namespace == b.Namespace && same(a.Requests, b.Requests) && same(a.Streams, b.Streams) && same(a.Notifications, b.Notifications)
}

// protoErr is an error of the protocol-extension API on the member.
func protoErr(server, format string, args ...any) error {
	return messages.Errorf(messages.KindInvalidArgs, server, format, args...)
}
