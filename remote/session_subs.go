package remote

import (
	"encoding/json"

	mcprt "github.com/mcprt/mcprt"
	"github.com/mcprt/mcprt/messages"
	"github.com/mcprt/mcprt/sessions"
)

// A session's share of the events companion. The runtime reuses a live
// subscription for a subscribe of the same server, event and canonical
// arguments, so two sessions may own one subscription (one events stream,
// one dedupe window); each gets the wakeups of what it owns (router.go).
// mcp_events' unsubscribe and list are therefore the session's own: an
// unsubscribe ends only this session's share (the runtime's subscription
// ends with its last owner), and list shows only what this session owns.

// ruleRequest is what the rules (package sessions) need of a request:
// the server it names, its mcp_events action, or a typed subscription's
// subscribe or Stop and its key.
func ruleRequest(m *requestMsg) sessions.Request {
	req := sessions.Request{ID: m.ID}
	req.Server, req.Counts = requestServer(m)
	req.Action, req.Sub = eventsAction(m)
	switch m.Op {
	case opSubscribe, opUnsubscribe:
		var k unsubscribeArgs
		_ = json.Unmarshal(m.Args, &k)
		req.Action, req.Key = sessions.ActionTypedSubscribe, k.Key
		if m.Op == opUnsubscribe {
			req.Action = sessions.ActionTypedUnsubscribe
		}
	}
	return req
}

// limitErr is the error answering a request the rules refused: a limit of
// the session (resource_exhausted), or a typed key in use.
func limitErr(e sessions.Effect) *wireErr {
	kind := messages.KindResourceExhausted
	if e.Refused == sessions.RefusedKey {
		kind = messages.KindInvalidArgs
	}
	return toWireErr(messages.Errorf(kind, "", "%s", e.Why))
}

// limit is a configured limit: 0 is def, negative none (0 for the rules).
func limit(n, def int) int {
	switch {
	case n == 0:
		return def
	case n < 0:
		return 0
	}
	return n
}

// eventsAction is the action of an mcp_events request ("" for any other
// request) and the subscription it names; the rules (package sessions)
// decide what the session answers alone.
func eventsAction(m *requestMsg) (action, sub string) {
	if m.Op != opTool || m.Name != eventsTool {
		return "", ""
	}
	var a struct {
		Action string `json:"action"`
		Sub    string `json:"subscription_id"`
	}
	if json.Unmarshal(m.Args, &a) != nil {
		return "", "" // the tool itself says what is wrong
	}
	return a.Action, a.Sub
}

// letGo unsubscribes the subscription a subscribe made when the session
// had given up on it (its caller's context ended) before the reply came:
// the member made this session an owner if the cancel reached it after the
// subscribe's outcome, and nobody here knows the subscription's id.
func (s *Session) letGo(r *replyMsg) {
	var res mcprt.Result
	if r.Err != nil || json.Unmarshal(r.Result, &res) != nil || res.IsError {
		return
	}
	sub := subscribed(res)
	if sub == "" {
		return
	}
	// Once the session ended, the member released its shares.
	args := unsubscribeEvents(sub)
	s.requestLater(opTool, eventsTool, args)
}

// unsubscribeEvents are the events tool's arguments that unsubscribe sub.
func unsubscribeEvents(sub string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"action": "unsubscribe", "subscription_id": sub})
	return b
}

func stoppedResult() mcprt.Result {
	return mcprt.Result{Text: `{"stopped":true}`, Details: map[string]any{"stopped": true}}
}

// replyResult answers a tool request with res.
func (a *sessionActor) replyResult(id uint64, res mcprt.Result) {
	b, _ := json.Marshal(res)
	a.reply(&replyMsg{ID: id, Result: b})
}

// onlyOwn keeps, of a list result, the subscriptions in own.
func onlyOwn(raw json.RawMessage, own map[string]bool) json.RawMessage {
	var res mcprt.Result
	if json.Unmarshal(raw, &res) != nil || res.IsError {
		return raw
	}
	var list struct {
		Subscriptions []json.RawMessage `json:"subscriptions"`
	}
	if json.Unmarshal([]byte(res.Text), &list) != nil {
		return raw
	}
	kept := []json.RawMessage{}
	details := []any{}
	for _, s := range list.Subscriptions {
		var id struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(s, &id) == nil && own[id.ID] {
			kept = append(kept, s)
			var v any
			_ = json.Unmarshal(s, &v)
			details = append(details, v)
		}
	}
	text, _ := json.Marshal(map[string]any{"subscriptions": kept})
	res.Text, res.Details = string(text), map[string]any{"subscriptions": details}
	b, err := json.Marshal(res)
	if err != nil {
		return raw
	}
	return b
}
