package sessions

import "fmt"

// Request is what the rules need to know of a session's request.
type Request struct {
	// ID is the session's id for the request, unique among its calls in
	// flight.
	ID uint64
	// Server is the server the request names ("" for none); Counts is set
	// when the request may reach a server, so that a server's question
	// during it may be the session's (Pick). Requests that only read what
	// the runtime knows do not count.
	Server string
	Counts bool
	// Action is the mcp_events action of the request (subscribe,
	// unsubscribe, list), or ActionTypedSubscribe or
	// ActionTypedUnsubscribe ("" for any other request); Sub the
	// subscription an unsubscribe names, Key the typed subscription's key.
	Action, Sub string
	Key         uint64
}

// Kind is what an effect asks its executor to do.
type Kind int

// The effects. Each names its Session; the fields each one uses are listed.
const (
	// Arm (re)arms the session's liveness timer with token Beat: when it
	// fires, pass Beat to Expired.
	Arm Kind = iota + 1
	// StopTimer stops the session's liveness timer.
	StopTimer
	// Run starts request ID on the runtime; its outcome goes to CallDone.
	// Filter, when not nil, holds the subscriptions to keep of a list's
	// answer (the session's own at the time).
	Run
	// CancelCall cancels call ID (its context): its lease on a server's
	// connection returns; its outcome still comes to CallDone.
	CancelCall
	// Reply answers call ID with the outcome CallDone was given.
	Reply
	// ReplyDuplicate answers request ID: an id of a call in flight.
	ReplyDuplicate
	// ReplyStopped answers an unsubscribe ID with {"stopped":true}
	// without running it (the session does not own Sub, or others do).
	ReplyStopped
	// ReplyEnded answers call ID with the error the session ended with
	// (Why).
	ReplyEnded
	// Ended tells the session it ended (Why); Calls and Subs count what it
	// held then.
	Ended
	// HeartbeatAck answers a heartbeat: the member lives.
	HeartbeatAck
	// PassAnswer hands the session's answer of question ID to the
	// question waiting for it.
	PassAnswer
	// AnswerEnded answers question ID, put to the session before it
	// ended, with the error it ended with (Why).
	AnswerEnded
	// PassAsk puts question ID to the session.
	PassAsk
	// WithdrawAsk tells the session that question ID is withdrawn.
	WithdrawAsk
	// RefuseAsk answers question ID at once: the session asked has ended.
	RefuseAsk
	// Unsubscribe ends the runtime's subscription Sub: its last owner
	// left.
	Unsubscribe
	// Stop stops the session's actor: it has ended and no call of it is
	// in flight any more.
	Stop
	// Rerun runs the session's subscribe ID on the runtime again; its
	// outcome goes to CallDone. Its earlier outcome named Sub, a
	// subscription whose last owner was ending it (closing.go): that
	// outcome is dropped, never answered.
	Rerun
	// Refuse answers request ID at once with an error (Why): a limit of
	// the session (Refused says which; Count is what it held, Limit the
	// limit) or a typed subscription's key already in use. Nothing else
	// happens.
	Refuse
	// EndTyped ends the session's typed subscription Key, made or being
	// made by subscribe ID: nothing more of it is sent, and it stops.
	EndTyped
)

var kindNames = map[Kind]string{Arm: "arm", StopTimer: "stop-timer", Run: "run", CancelCall: "cancel",
	Reply: "reply", ReplyDuplicate: "reply-duplicate", ReplyStopped: "reply-stopped", ReplyEnded: "reply-ended",
	Ended: "ended", HeartbeatAck: "heartbeat-ack", PassAnswer: "pass-answer", AnswerEnded: "answer-ended",
	PassAsk: "pass-ask", WithdrawAsk: "withdraw-ask", RefuseAsk: "refuse-ask", Unsubscribe: "unsubscribe", Stop: "stop", Rerun: "rerun",
	Refuse: "refuse", EndTyped: "end-typed"}

func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Effect is one thing for the executor to do.
type Effect struct {
	Kind    Kind
	Session string
	ID      uint64          // a call's or a question's id
	Beat    uint64          // Arm: the timer's token
	Sub     string          // Unsubscribe: the subscription; Rerun: the one ending
	Filter  map[string]bool // Run of a list: the session's subscriptions
	Why     string          // ReplyEnded, Ended, AnswerEnded: why the session ended
	Calls   int             // Ended: calls in flight then
	Subs    int             // Ended: subscriptions owned then
	Key     uint64          // EndTyped: the typed subscription's key
	Refused Refusal         // Refuse: which limit
	Count   int             // Refuse: what the session held
	Limit   int             // Refuse: its limit
}

func (e Effect) String() string {
	s := e.Kind.String() + " " + e.Session
	switch e.Kind {
	case Arm:
		s += fmt.Sprintf(" beat=%d", e.Beat)
	case Run, CancelCall, Reply, ReplyDuplicate, ReplyStopped, ReplyEnded, PassAnswer, AnswerEnded, PassAsk, WithdrawAsk, RefuseAsk:
		s += fmt.Sprintf(" %d", e.ID)
	case Unsubscribe:
		s += " " + e.Sub
	case Rerun:
		s += fmt.Sprintf(" %d (%s was ending)", e.ID, e.Sub)
	case Ended:
		s += fmt.Sprintf(" calls=%d subs=%d %q", e.Calls, e.Subs, e.Why)
	case Refuse:
		s += fmt.Sprintf(" %d %s %d/%d", e.ID, e.Refused, e.Count, e.Limit)
	case EndTyped:
		s += fmt.Sprintf(" key=%d (%d)", e.Key, e.ID)
	}
	return s
}
