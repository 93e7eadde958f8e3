package extension

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/messages"
)

func TestValidate(t *testing.T) {
	in := Definition{Namespace: "events", Requests: []string{"events/list", "events/list"}, Streams: []string{"events/stream"},
		Notifications: []string{"notifications/events/event", "notifications/events/active"}}
	got, err := Validate(in)
	if err != nil || len(got.Requests) != 1 || got.Streams[0] != "events/stream" || len(got.Notifications) != 2 {
		t.Fatalf("%+v %v", got, err)
	}
	in.Requests[0], in.Notifications[0] = "changed", "changed"
	if got.Requests[0] != "events/list" || got.Notifications[0] != "notifications/events/event" {
		t.Fatal("the definition was not copied")
	}
	bad := []Definition{
		{Namespace: "", Requests: []string{"x/y"}},
		{Namespace: "tools", Requests: []string{"tools/x"}},
		{Namespace: "initialize", Requests: []string{"initialize/x"}},
		{Namespace: "a/b", Requests: []string{"a/b/c"}},
		{Namespace: "events", Requests: []string{"other/list"}},
		{Namespace: "events", Streams: []string{"events"}},
		{Namespace: "events", Notifications: []string{"events/event"}},
		{Namespace: "events", Notifications: []string{"notifications/other/x"}},
		{Namespace: "events", Requests: []string{"events/x"}, Streams: []string{"events/x"}},
		{Namespace: "events"},
	}
	for _, d := range bad {
		if _, err := Validate(d); !errors.Is(err, ErrInvalidDefinition) {
			t.Errorf("%+v accepted (%v)", d, err)
		}
	}
	for _, ns := range ReservedNamespaces {
		if _, err := Validate(Definition{Namespace: ns, Requests: []string{ns + "/x"}}); err == nil {
			t.Errorf("reserved namespace %q accepted", ns)
		}
	}
}

func TestCheckParams(t *testing.T) {
	for _, ok := range []string{``, `null`, `{}`, `{"name":"x"}`, `{"_meta":{"com.example/trace":"1"}}`} {
		if err := CheckParams(json.RawMessage(ok)); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{`[1]`, `"x"`, `{"_meta":[]}`, `{"_meta":{"io.modelcontextprotocol/subscriptionId":"x"}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, `{"_meta":{"progressToken":1}}`} {
		if err := CheckParams(json.RawMessage(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestEndOf(t *testing.T) {
	rpc := &messages.Error{Kind: messages.KindRPC, Server: "s", RPCCode: -32012, RPCData: json.RawMessage(`{"reason":"x"}`),
		Message: fmt.Sprintf("forbidden (JSON-RPC error %d)", -32012)}
	cases := []struct {
		o    Outcome
		want messages.EndReason
	}{
		{Outcome{Result: json.RawMessage(`{}`)}, messages.EndEnded},
		{Outcome{ServerCancelled: true}, messages.EndEnded},
		{Outcome{Err: rpc}, messages.EndError},
		{Outcome{Err: messages.Errorf(messages.KindAborted, "s", "cancelled")}, messages.EndCancelled},
		{Outcome{Err: messages.Errorf(messages.KindShutdown, "s", "closing")}, messages.EndCancelled},
		{Outcome{Err: messages.Errorf(messages.KindDisconnected, "s", "gone")}, messages.EndDisconnected},
		{Outcome{Err: messages.Errorf(messages.KindRequestTimeout, "s", "slow")}, messages.EndError},
	}
	for _, c := range cases {
		if got := EndOf(c.o); got.Reason != c.want {
			t.Errorf("%+v: %s, want %s", c.o, got.Reason, c.want)
		}
	}
	e := EndOf(Outcome{Err: rpc})
	if e.ProtocolError == nil || e.ProtocolError.Code != -32012 || e.ProtocolError.Message != "forbidden" || string(e.ProtocolError.Data) != `{"reason":"x"}` {
		t.Fatalf("protocol error %+v", e.ProtocolError)
	}
	// An error object without a numeric code (read as 0) keeps no
	// protocol error: for a subscription it is an interruption.
	nocode := &messages.Error{Kind: messages.KindRPC, Server: "s", Message: "upstream went away (JSON-RPC error 0)"}
	if e := EndOf(Outcome{Err: nocode}); e.Reason != messages.EndError || e.ProtocolError != nil {
		t.Fatalf("an error without a code: %+v", e)
	}
}

func TestStreamLife(t *testing.T) {
	var s Stream
	render := func(effects []StreamEffect) string {
		var parts []string
		for _, e := range effects {
			switch e := e.(type) {
			case Deliver:
				parts = append(parts, "deliver "+e.Method)
			case CancelRequest:
				parts = append(parts, "cancel")
			case Finish:
				parts = append(parts, "finish "+string(e.End.Reason))
			}
		}
		return strings.Join(parts, "; ")
	}
	if got := render(s.Frame("notifications/x/a", nil)); got != "deliver notifications/x/a" || !s.IsSent() {
		t.Fatalf("frame: %q (a frame implies the request was sent)", got)
	}
	if got := render(s.HandlerFailed(errors.New("boom"))); got != "cancel; finish error" {
		t.Fatalf("handler failure: %q", got)
	}
	if end, ok := s.Ended(); !ok || !strings.Contains(end.Error, "protocol handler failed: boom") {
		t.Fatalf("end %+v", end)
	}
	if got := render(s.Frame("notifications/x/a", nil)) + render(s.Outcome(Outcome{})) + render(s.Cancel()); got != "" {
		t.Fatalf("after the end: %q", got)
	}
	if s.Late != 1 || s.Delivered != 1 {
		t.Fatalf("late %d delivered %d", s.Late, s.Delivered)
	}
	var o Stream
	if got := render(o.Lost("connection ended")); got != "finish disconnected" {
		t.Fatalf("lost: %q", got)
	}
}
