package remote

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/mcprt/mcprt/messages"
)

// The wire: every message between a session and the serving process is a
// google.protobuf.BytesValue (protoactor's remote serializes proto
// messages only: its writer always uses the protobuf serializer, whatever
// the sender asked) whose bytes are a JSON envelope {"k": kind, "b": body}.
// One codec maps the Go types below to their kinds; an unknown kind or a
// malformed body is refused with an error, never guessed at.

// Kinds of the envelope.
const (
	kindAttach    = "attach"    // session → gateway
	kindAttached  = "attached"  // gateway → session
	kindRequest   = "request"   // session → its session actor
	kindReply     = "reply"     // session actor → session
	kindCancel    = "cancel"    // session → its session actor
	kindHeartbeat = "heartbeat" // session → its session actor
	kindDetach    = "detach"    // session → its session actor
	kindDeliver   = "deliver"   // session actor → session (Host.Deliver)
	kindNotify    = "notify"    // session actor → session (Host.Notify)
	kindEnded     = "ended"     // session actor → session: it ended the session
	kindAsk       = "ask"       // session actor → session: a server asks the client (asks.go)
	kindAskCancel = "askCancel" // session actor → session: the server withdrew its question
	kindAnswer    = "answer"    // session → its session actor: the answer to an ask
	kindTyped     = "typed"     // session actor → session: a typed subscription's deliveries (ops_subscribe.go)
)

type envelope struct {
	Kind string          `json:"k"`
	Body json.RawMessage `json:"b,omitempty"`
}

// pidRef is a PID on the wire.
type pidRef struct {
	Address string `json:"address"`
	ID      string `json:"id"`
}

func refOf(p *actor.PID) pidRef { return pidRef{Address: p.Address, ID: p.Id} }

func (r pidRef) pid() *actor.PID { return actor.NewPID(r.Address, r.ID) }

// attachMsg asks the gateway for a session actor; Client is the
// attaching process's receiver.
type attachMsg struct {
	Client pidRef `json:"client"`
	// Nonce pairs the answer with the question.
	Nonce string `json:"nonce"`
	// Member says the session is another member's (peers.go): its
	// requests are never forwarded again.
	Member bool `json:"member,omitempty"`
}

// attachedMsg answers attachMsg: the session actor, or why not.
type attachedMsg struct {
	Nonce   string     `json:"nonce"`
	Session pidRef     `json:"session"`
	Err     *wireErr   `json:"err,omitempty"`
	Timeout durationMs `json:"timeoutMs"`
}

// durationMs is a duration in milliseconds on the wire.
type durationMs int64

// requestMsg is one operation of the host-facing API (ops.go).
type requestMsg struct {
	ID   uint64          `json:"id"`
	Op   string          `json:"op"`
	Name string          `json:"name,omitempty"`
	Args json.RawMessage `json:"args,omitempty"`
}

// replyMsg answers requestMsg with the same ID.
type replyMsg struct {
	ID     uint64          `json:"id"`
	Result json.RawMessage `json:"result,omitempty"`
	Err    *wireErr        `json:"err,omitempty"`
}

// cancelMsg cancels the request with ID (the caller's context ended).
type cancelMsg struct {
	ID uint64 `json:"id"`
}

// deliverMsg is a Host.Deliver for the session.
type deliverMsg struct {
	Message messages.HostMessage `json:"message"`
}

// notifyMsg is a Host.Notify for the session.
type notifyMsg struct {
	Notice messages.Notice `json:"notice"`
}

// endedMsg says the member ended the session (timeout, shutdown): its
// calls in flight were answered with Err, later calls fail with it.
type endedMsg struct {
	Err *wireErr `json:"err"`
}

// askMsg is a server's question for the session's hooks (asks.go).
type askMsg struct {
	// ID pairs the answer with the question (0: no answer is wanted).
	ID     uint64          `json:"id,omitempty"`
	Kind   string          `json:"kind"`
	Server string          `json:"server"`
	Body   json.RawMessage `json:"body,omitempty"`
	// Call is the session's request the question (or progress) belongs
	// to, when the member knows it (0: it does not; asks.go).
	Call uint64 `json:"call,omitempty"`
}

// askCancelMsg withdraws the question with ID.
type askCancelMsg struct {
	ID uint64 `json:"id"`
}

// answerMsg answers the question with ID: Body, or Err.
type answerMsg struct {
	ID   uint64          `json:"id"`
	Body json.RawMessage `json:"body,omitempty"`
	Err  *wireErr        `json:"err,omitempty"`
}

// wireErr is a *messages.Error on the wire: its kind by stable code.
type wireErr struct {
	Code         string          `json:"code"`
	Server       string          `json:"server,omitempty"`
	Message      string          `json:"message"`
	RPCCode      int             `json:"rpcCode,omitempty"`
	RPCData      json.RawMessage `json:"rpcData,omitempty"`
	ServerStderr []string        `json:"serverStderr,omitempty"`
}

func toWireErr(err error) *wireErr {
	if err == nil {
		return nil
	}
	e := messages.AsError(err, messages.KindInternal, "")
	return &wireErr{Code: e.Kind.Code(), Server: e.Server, Message: e.Message, RPCCode: e.RPCCode, RPCData: e.RPCData, ServerStderr: e.ServerStderr}
}

// maxKind bounds the search for a code's kind.
const maxKind = 64

func (w *wireErr) toError() *messages.Error {
	kind := messages.KindInternal
	for k := messages.ErrorKind(1); k < maxKind; k++ {
		if k.Code() == w.Code {
			kind = k
			break
		}
	}
	return &messages.Error{Kind: kind, Server: w.Server, Message: w.Message, RPCCode: w.RPCCode, RPCData: w.RPCData, ServerStderr: w.ServerStderr}
}

// kindOf names the envelope kind of a wire message.
func kindOf(m any) (string, error) {
	switch m.(type) {
	case *attachMsg:
		return kindAttach, nil
	case *attachedMsg:
		return kindAttached, nil
	case *requestMsg:
		return kindRequest, nil
	case *replyMsg:
		return kindReply, nil
	case *cancelMsg:
		return kindCancel, nil
	case heartbeatMsg:
		return kindHeartbeat, nil
	case detachMsg:
		return kindDetach, nil
	case *deliverMsg:
		return kindDeliver, nil
	case *notifyMsg:
		return kindNotify, nil
	case *endedMsg:
		return kindEnded, nil
	case *askMsg:
		return kindAsk, nil
	case *askCancelMsg:
		return kindAskCancel, nil
	case *answerMsg:
		return kindAnswer, nil
	case *protoEventMsg:
		return kindProto, nil
	case *typedMsg:
		return kindTyped, nil
	}
	return "", fmt.Errorf("remote: %T is not a wire message", m)
}

// heartbeatMsg says the session is alive; detachMsg ends it.
type (
	heartbeatMsg struct{}
	detachMsg    struct{}
)

// encode wraps a wire message for protoactor. The envelope is written by
// hand around the body's JSON (one encoding, not two), and so is a
// reply's body around its result (already JSON): a tool call's reply is
// the hot path (docs/performance.md).
func encode(m any) (*wrapperspb.BytesValue, error) {
	b, err := appendEnvelope(nil, m)
	if err != nil {
		return nil, err
	}
	return wrapperspb.Bytes(b), nil
}

// appendEnvelope appends m's envelope to b.
func appendEnvelope(b []byte, m any) ([]byte, error) {
	kind, err := kindOf(m)
	if err != nil {
		return nil, err
	}
	b = append(b, `{"k":"`...)
	b = append(b, kind...) // kinds are plain ASCII words
	b = append(b, '"')
	r, isReply := m.(*replyMsg)
	switch {
	case kind == kindHeartbeat || kind == kindDetach:
	case isReply && r.Err == nil && len(r.Result) > 0:
		b = append(b, `,"b":{"id":`...)
		b = strconv.AppendUint(b, r.ID, 10)
		b = append(b, `,"result":`...)
		b = append(b, r.Result...)
		b = append(b, '}')
	default:
		if q, ok := m.(*requestMsg); ok {
			if out, ok := appendRequest(append(b, `,"b":`...), q); ok {
				return append(out, '}'), nil
			}
		}
		body, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("remote: encoding %s: %w", kind, err)
		}
		b = append(b, `,"b":`...)
		b = append(b, body...)
	}
	return append(b, '}'), nil
}

// splitEnvelope reads the envelope encode writes without decoding its
// body; ok is false for any other spelling (then it is decoded whole).
func splitEnvelope(b []byte) (kind string, body []byte, ok bool) {
	rest, ok := bytes.CutPrefix(b, []byte(`{"k":"`))
	if !ok {
		return "", nil, false
	}
	i := bytes.IndexByte(rest, '"')
	if i < 0 || bytes.IndexByte(rest[:i], '\\') >= 0 {
		return "", nil, false
	}
	kind, rest = kindName(rest[:i]), rest[i+1:]
	if string(rest) == "}" {
		return kind, nil, true
	}
	rest, ok = bytes.CutPrefix(rest, []byte(`,"b":`))
	if !ok || len(rest) < 2 || rest[len(rest)-1] != '}' {
		return "", nil, false
	}
	return kind, rest[:len(rest)-1], true
}

// kindName is the kind spelled b (the constant, not a copy, for the
// kinds there are).
func kindName(b []byte) string {
	switch string(b) {
	case kindRequest:
		return kindRequest
	case kindReply:
		return kindReply
	case kindCancel:
		return kindCancel
	case kindHeartbeat:
		return kindHeartbeat
	}
	return string(b)
}

// splitReply reads a reply body as encode writes it ({"id":N,"result":R}),
// leaving R to the caller's decoding; ok is false for any other spelling.
func splitReply(b []byte) (r *replyMsg, ok bool) {
	rest, ok := bytes.CutPrefix(b, []byte(`{"id":`))
	if !ok {
		return nil, false
	}
	i := bytes.IndexByte(rest, ',')
	if i < 1 {
		return nil, false
	}
	id, err := strconv.ParseUint(string(rest[:i]), 10, 64)
	if err != nil {
		return nil, false
	}
	rest, ok = bytes.CutPrefix(rest[i:], []byte(`,"result":`))
	if !ok || len(rest) < 2 || rest[len(rest)-1] != '}' {
		return nil, false
	}
	return &replyMsg{ID: id, Result: rest[:len(rest)-1]}, true
}

// decode unwraps a message protoactor delivered: a wire message, or an
// error naming what was wrong with it.
func decode(v *wrapperspb.BytesValue) (any, error) {
	var env envelope
	if kind, body, ok := splitEnvelope(v.GetValue()); ok {
		env = envelope{Kind: kind, Body: body}
		switch kind {
		case kindReply:
			// The result is decoded (and so checked) once, by the caller
			// waiting for it; a result that is not JSON fails there.
			if r, ok := splitReply(body); ok {
				return r, nil
			}
		case kindRequest:
			if r, ok := splitRequest(body); ok {
				return r, nil
			}
		}
	} else if err := json.Unmarshal(v.GetValue(), &env); err != nil {
		return nil, fmt.Errorf("remote: a message is not a JSON envelope: %w", err)
	}
	var m any
	switch env.Kind {
	case kindAttach:
		m = &attachMsg{}
	case kindAttached:
		m = &attachedMsg{}
	case kindRequest:
		m = &requestMsg{}
	case kindReply:
		m = &replyMsg{}
	case kindCancel:
		m = &cancelMsg{}
	case kindDeliver:
		m = &deliverMsg{}
	case kindNotify:
		m = &notifyMsg{}
	case kindEnded:
		m = &endedMsg{}
	case kindAsk:
		m = &askMsg{}
	case kindAskCancel:
		m = &askCancelMsg{}
	case kindAnswer:
		m = &answerMsg{}
	case kindProto:
		m = &protoEventMsg{}
	case kindTyped:
		m = &typedMsg{}
	case kindHeartbeat:
		return heartbeatMsg{}, nil
	case kindDetach:
		return detachMsg{}, nil
	default:
		return nil, fmt.Errorf("remote: unknown message kind %q", env.Kind)
	}
	if err := json.Unmarshal(env.Body, m); err != nil {
		return nil, fmt.Errorf("remote: malformed %s message: %w", env.Kind, err)
	}
	return m, nil
}
