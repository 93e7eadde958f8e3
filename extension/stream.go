package extension

import (
	"encoding/json"

	"github.com/mcprt/mcprt/messages"
)

// Outcome is how a stream's request finished, as the server actor reports
// it: the final result or error, or that the server cancelled it.
type Outcome struct {
	Result          json.RawMessage
	Err             *messages.Error
	ServerCancelled bool
}

// EndOf turns a stream's outcome into its End: a result or the server's
// cancellation is ended; a JSON-RPC error is error, with the server's code,
// message and data kept; the client giving up (or shutdown) is cancelled;
// a lost connection or response stream is disconnected; anything else is
// error.
func EndOf(o Outcome) messages.End {
	switch {
	case o.ServerCancelled:
		return messages.End{Reason: messages.EndEnded, Error: "MCP server cancelled the stream"}
	case o.Err == nil:
		return messages.End{Reason: messages.EndEnded}
	}
	e := o.Err
	switch e.Kind {
	case messages.KindRPC:
		return messages.End{Reason: messages.EndError, Error: e.Error(), ProtocolError: e.Protocol()}
	case messages.KindAborted, messages.KindShutdown:
		return messages.End{Reason: messages.EndCancelled, Error: e.Error()}
	case messages.KindDisconnected:
		return messages.End{Reason: messages.EndDisconnected, Error: e.Error()}
	}
	return messages.End{Reason: messages.EndError, Error: e.Error()}
}

// StreamEffect is something a stream's actor must do.
type StreamEffect interface{ streamEffect() }

// Deliver hands one notification to the consumer's handler.
type Deliver struct {
	Method string
	Params json.RawMessage
}

// CancelRequest gives up on the stream's request (on the wire, the
// transport's way).
type CancelRequest struct{}

// Finish ends the stream with End: report it to the consumer and stop.
type Finish struct{ End messages.End }

func (Deliver) streamEffect()       {}
func (CancelRequest) streamEffect() {}
func (Finish) streamEffect()        {}

// Stream is the life of one stream (or notification observer, which is a
// stream without a request): it is open until it ends, ends once, and
// after that only counts the frames that still arrive.
type Stream struct {
	sent  bool
	ended bool
	end   messages.End
	// Late counts frames that arrived after the end; Delivered those handed
	// to the consumer.
	Late, Delivered uint64
}

// Sent records that the request was written.
func (s *Stream) Sent() { s.sent = true }

// IsSent reports whether the request was written (a frame implies it).
func (s *Stream) IsSent() bool { return s.sent }

// Ended reports whether the stream has ended, and how.
func (s *Stream) Ended() (messages.End, bool) { return s.end, s.ended }

// Frame is a notification routed to the stream.
func (s *Stream) Frame(method string, params json.RawMessage) []StreamEffect {
	if s.ended {
		s.Late++
		return nil
	}
	s.sent = true
	s.Delivered++
	return []StreamEffect{Deliver{Method: method, Params: params}}
}

// HandlerFailed ends the stream because its consumer's handler failed (an
// error or a panic): only this stream ends, and its request is cancelled.
func (s *Stream) HandlerFailed(err error) []StreamEffect {
	return s.finish(messages.End{Reason: messages.EndError, Error: "protocol handler failed: " + err.Error()}, true)
}

// Cancel ends the stream at the consumer's request (or its session's
// close, its registration's disposal, shutdown).
func (s *Stream) Cancel() []StreamEffect {
	return s.finish(messages.End{Reason: messages.EndCancelled}, true)
}

// Outcome ends the stream with its request's final outcome.
func (s *Stream) Outcome(o Outcome) []StreamEffect { return s.finish(EndOf(o), false) }

// Crashed ends the stream because the actor running it (or its session's)
// crashed and the crash policy ended it: an error with why, and its
// request is cancelled.
func (s *Stream) Crashed(why string) []StreamEffect {
	return s.finish(messages.End{Reason: messages.EndError, Error: why}, true)
}

// Lost ends an observer (or a stream whose outcome will not come) because
// its connection ended.
func (s *Stream) Lost(why string) []StreamEffect {
	return s.finish(messages.End{Reason: messages.EndDisconnected, Error: why}, false)
}

func (s *Stream) finish(end messages.End, cancel bool) []StreamEffect {
	if s.ended {
		return nil
	}
	s.ended, s.end = true, end
	if cancel {
		return []StreamEffect{CancelRequest{}, Finish{End: end}}
	}
	return []StreamEffect{Finish{End: end}}
}
